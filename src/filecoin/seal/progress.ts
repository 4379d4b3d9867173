/** The sealer's progress renderer is the CLI's shared one (src/util/progress.ts). */
export { cliProgressRenderer, type ProgressRenderer } from '../../util/progress.js';
