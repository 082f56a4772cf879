#!/usr/bin/env bash
# Create the project's virtual environment unless the interpreter to use exists already.
# Usage: make-venv.sh SYSTEM_PYTHON VENV_DIR PYTHON_TO_USE
set -euo pipefail
system_python=$1 venv=$2 target=$3
[ -x "$target" ] || command -v "$target" >/dev/null 2>&1 && exit 0
if ! "$system_python" -m venv --help >/dev/null 2>&1 || ! "$system_python" -c "import ensurepip" 2>/dev/null; then
  # Debian splits venv/ensurepip into python3-venv.
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""; [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo="sudo"
    ver=$("$system_python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "python${ver}-venv" || $sudo apt-get install -y -qq --no-install-recommends python3-venv
  else
    echo "error: $system_python cannot create a virtual environment (install its venv module)" >&2; exit 1
  fi
fi
echo "creating the virtual environment $venv"
"$system_python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
