#!/usr/bin/env bash
# Debian packages the project uses: WordNet 3.0 data (METEOR, offline) and,
# with --test, a headless Chromium for the real-browser dashboard tests:
# chromium-headless-shell (the headless build Playwright itself runs: a lighter
# launch and page than the full browser) where Debian packages it, else chromium.
# Either one already installed is kept (tests/browser_session.py takes the shell first).
set -euo pipefail
missing=()
dpkg -s wordnet-base >/dev/null 2>&1 || missing+=(wordnet-base)
browser=false
if [ "${1:-}" = "--test" ] && ! dpkg -s chromium-headless-shell >/dev/null 2>&1 \
   && ! dpkg -s chromium >/dev/null 2>&1; then
  browser=true
fi
[ ${#missing[@]} -eq 0 ] && [ "$browser" = false ] && exit 0
wanted="${missing[*]}"
if [ "$browser" = true ]; then wanted="$wanted chromium-headless-shell"; fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "note: cannot install ${wanted# } (no apt-get); METEOR and the browser tests need them" >&2
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "note: run as root to install ${wanted# }" >&2; exit 0; fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
if [ "$browser" = true ]; then
  if apt-cache show chromium-headless-shell >/dev/null 2>&1; then
    missing+=(chromium-headless-shell)
  else
    missing+=(chromium)
  fi
fi
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
