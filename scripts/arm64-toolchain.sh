#!/usr/bin/env bash
# Installs the linux-arm64-gnu cross toolchain from Debian's own packages (docs/release.md,
# "linux-arm64-gnu"): the second Rust toolchain (rustc-web, cargo-web → /usr/bin/rustc and
# /usr/bin/cargo), the aarch64 standard library, the aarch64 linker, qemu-user to run results, and
# the arm64 C runtime as Debian's multiarch packages (libc6:arm64, libstdc++6:arm64) so that
# qemu-aarch64 runs aarch64 programs against one glibc: `qemu-aarch64 -L /usr/aarch64-linux-gnu`
# mixes the cross sysroot's ld.so with the multiarch libc (two different glibc builds) and hangs
# the first thread an aarch64 program starts (docs/release.md, "linux-arm64-gnu").
# rustup's toolchain in ~/.cargo/bin stays first in PATH and is not touched.
# Idempotent: does nothing when everything is already there. Exit status 0 when the toolchain is
# usable afterwards, 1 (with a reason on stderr) when apt could not install it.
set -uo pipefail

have_all() {
  [ -x /usr/bin/rustc ] && [ -x /usr/bin/cargo ] && command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 &&
    command -v qemu-aarch64 >/dev/null 2>&1 && [ -d /usr/aarch64-linux-gnu/lib ] &&
    [ -e /lib/ld-linux-aarch64.so.1 ] && [ -e /usr/lib/aarch64-linux-gnu/libstdc++.so.6 ] &&
    ls /usr/lib/rustlib/aarch64-unknown-linux-gnu/lib/libstd-*.rlib >/dev/null 2>&1
}

if have_all; then
  exit 0
fi

sudo=()
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo=(sudo -n)
export DEBIAN_FRONTEND=noninteractive
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  "${sudo[@]}" dpkg --add-architecture arm64 || { echo "arm64-toolchain: dpkg --add-architecture arm64 failed" >&2; exit 1; }
fi
"${sudo[@]}" apt-get update -qq >/dev/null 2>&1 || { echo "arm64-toolchain: apt-get update failed" >&2; exit 1; }
"${sudo[@]}" apt-get install -y -qq --no-install-recommends \
  rustc-web cargo-web libstd-rust-web-dev:arm64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
  libstdc++6-arm64-cross qemu-user libc6:arm64 libgcc-s1:arm64 libstdc++6:arm64 >/dev/null 2>&1 ||
  { echo "arm64-toolchain: apt-get install of the cross toolchain failed" >&2; exit 1; }
if have_all; then
  echo "arm64-toolchain: installed ($(/usr/bin/rustc --version), $(qemu-aarch64 --version | head -n 1))"
  exit 0
fi
echo "arm64-toolchain: packages installed but a piece is missing (rustc/cargo/linker/qemu/aarch64 std)" >&2
exit 1
