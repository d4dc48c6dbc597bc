// The server package's folder: the one holding its package.json, its migrations (drizzle/) and, in
// a deployment, the console's built files. Found from this module's own file, which sits at
// another depth in the sources (src/) than in a bundle (dist/, or a test run's folder).

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function nearestPackageFolder(start: string): string {
  for (let folder = start; ; folder = dirname(folder)) {
    if (existsSync(join(folder, 'package.json'))) return folder;
    if (dirname(folder) === folder) {
      throw new Error(
        `no package.json in ${start} or any folder above it; run the server from its package`,
      );
    }
  }
}

export const PACKAGE_ROOT = nearestPackageFolder(dirname(fileURLToPath(import.meta.url)));
