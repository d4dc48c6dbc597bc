# Puts the pinned pnpm (package.json "packageManager") on PATH through corepack.
# Node 20's bundled corepack cannot verify the registry's current signing keys, so the check of
# that one download is skipped; the pnpm version itself stays pinned.
export COREPACK_INTEGRITY_KEYS=0
export COREPACK_ENABLE_DOWNLOAD_PROMPT=0
ensure_pnpm() {
  if ! command -v pnpm >/dev/null 2>&1 || ! pnpm --version >/dev/null 2>&1; then
    corepack enable
  fi
  pnpm --version >/dev/null
}
