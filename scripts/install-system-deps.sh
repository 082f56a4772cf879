#!/usr/bin/env bash
# Debian packages the project uses: WordNet 3.0 data (METEOR, offline) and,
# with --test, Chromium for the real-browser dashboard test.
set -euo pipefail
packages=(wordnet-base)
if [ "${1:-}" = "--test" ]; then
  packages+=(chromium)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "note: cannot install ${missing[*]} (no apt-get); METEOR and the browser test need them" >&2
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "note: run as root to install ${missing[*]}" >&2; exit 0; fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
