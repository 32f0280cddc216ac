// C sources are imported as text: esbuild's `.c` text loader inlines them into the agent bundle.
declare module '*.c' {
  const source: string;
  export default source;
}
