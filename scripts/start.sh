#!/bin/sh
# `npm start`: the built server (dist/server, made at install). The bench passes another bundle
# folder as $1, and node options after it.
#
# glibc's malloc raises its mmap threshold to the largest block ever freed (argon2's 19 MiB per
# key check, the compile worker's buffers) and from then on keeps blocks of that size in its heaps
# for good. Pinning the threshold at its default (128 KiB) keeps that memory returnable: measured
# about 50 MB less resident memory on an idle server after a registration (BENCHMARKS.md, idle
# RSS). Other C libraries ignore the variable; a GLIBC_TUNABLES of your own is kept as it is.
export GLIBC_TUNABLES="${GLIBC_TUNABLES:-glibc.malloc.mmap_threshold=131072}"
# V8's compile cache (Node 22.1 and later; older lines ignore the variable): a start reuses the
# compiled code of the bundle's modules from the last start instead of compiling them again
# (issue 23, item 13). It lives in the temporary folder, never in the installation.
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-${TMPDIR:-/tmp}/toolgate-compile-cache}"
bundle="${1:-$(dirname "$0")/../dist/server}"
[ $# -gt 0 ] && shift
exec node --enable-source-maps "$@" "$bundle/main.mjs"
