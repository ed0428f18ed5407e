#!/usr/bin/env bash
# Installs the Debian packages the tests need when they are missing:
# PostgreSQL (the store's contract tests start a throwaway server),
# Chromium and Firefox (the console's browser tests). Safe to run again: it
# only acts on what is missing.
set -euo pipefail

need=()
have_pg() {
  command -v initdb >/dev/null 2>&1 && return 0
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}
have_pg || need+=(postgresql)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v firefox-esr >/dev/null 2>&1 || command -v firefox >/dev/null 2>&1 || need+=(firefox-esr)

[ ${#need[@]} -eq 0 ] && exit 0

sudo=()
[ "$(id -u)" -ne 0 ] && sudo=(sudo)
echo "installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
