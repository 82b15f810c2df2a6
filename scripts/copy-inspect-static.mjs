// Copies the inspector's hand-written static files (HTML, CSS, icon) next to its compiled
// client in dist/inspect/static/, so `npm run build` produces everything the server serves.
import { cpSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const from = fileURLToPath(new URL('../src/inspect/static/', import.meta.url));
const to = fileURLToPath(new URL('../dist/inspect/static/', import.meta.url));
mkdirSync(to, { recursive: true });
cpSync(from, to, { recursive: true });
