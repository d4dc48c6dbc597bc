// pnpm's hook on each package's manifest as the install resolves it.
//
// The server takes one file from @scalar/api-reference: its prebuilt browser bundle for the /docs
// page (apps/server/src/routes/docs/docs.index.ts), which carries everything it runs. The
// package's own dependencies (Vue, CodeMirror and the rest of the page's sources) would be most of
// the server's production dependencies, in every install and in the deployable folder, and nothing
// loads them.
module.exports = {
  hooks: {
    readPackage(manifest) {
      if (manifest.name === '@scalar/api-reference') manifest.dependencies = {};
      return manifest;
    },
  },
};
