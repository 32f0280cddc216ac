// C sources and headers are imported as text: esbuild's `.c` and `.h` text loaders inline them
// into the agent bundle (scripts/build.mjs).
declare module '*.c' {
  const source: string;
  export default source;
}

declare module '*.h' {
  const source: string;
  export default source;
}
