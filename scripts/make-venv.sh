#!/usr/bin/env bash
# Make sure the interpreter the Makefile uses exists and has pip; create the project's
# virtual environment when it does not. Usage: make-venv.sh SYSTEM_PYTHON VENV_DIR PYTHON_TO_USE
#
# Debian and Ubuntu ship venv's pip bootstrap (ensurepip) in a separate package, python3-venv:
# without it `python3 -m venv` leaves a directory without pip. So: try, and if pip is missing,
# install pythonX.Y-venv through apt-get (as root, or with sudo) and try again.
set -euo pipefail
system_python=$1 venv=$2 target=$3

has_pip() { "$1" -m pip --version >/dev/null 2>&1; }

has_pip "$target" && exit 0
if [ "$target" != "$venv/bin/python" ]; then
  echo "error: $target has no pip; install it, or unset VIRTUAL_ENV to let make create $venv" >&2; exit 1
fi
command -v "$system_python" >/dev/null 2>&1 || { echo "error: $system_python not found (Python 3.11+ is needed)" >&2; exit 1; }
"$system_python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "error: $("$system_python" --version 2>&1) is too old: textgen-eval needs Python 3.11+" >&2; exit 1; }

create() { rm -rf "$venv"; "$system_python" -m venv "$venv" >/dev/null 2>&1 && has_pip "$venv/bin/python"; }

echo "creating the virtual environment $venv (with $system_python)"
if ! create; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "error: $system_python cannot create a virtual environment with pip; install its venv module" >&2; exit 1
  fi
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "error: installing python3-venv needs root: run as root, or install sudo" >&2; exit 1; }
    sudo="sudo"
  fi
  ver=$("$system_python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
  echo "installing python${ver}-venv (Debian's venv and pip bootstrap) with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "python${ver}-venv" \
    || $sudo apt-get install -y -qq --no-install-recommends python3-venv
  create || { echo "error: $system_python -m venv $venv still fails after installing python${ver}-venv" >&2; exit 1; }
fi
