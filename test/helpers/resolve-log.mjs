// Registers resolve-log-hook.mjs before the program's own hooks (tsx), so it sees every module.
import { register } from 'node:module';

register('./resolve-log-hook.mjs', import.meta.url);
