# Sourced by the benchmark scripts: builds the release addon (`cargo build --release -p
# archmax-napi`), copies it to target/bench-agent/harness.node and points
# NAPI_RS_NATIVE_LIBRARY_PATH at it, so `index.js` loads the release build while the debug
# ./harness.*.node the tests use is left alone. Run from the repository root.
cargo build --release -p archmax-napi >/dev/null 2>&1 \
  || { echo "release build failed; rerun: cargo build --release -p archmax-napi" >&2; exit 2; }
case "$(uname -s)" in
  Darwin) lib=target/release/libarchmax_napi.dylib ;;
  MINGW* | MSYS* | CYGWIN*) lib=target/release/archmax_napi.dll ;;
  *) lib=target/release/libarchmax_napi.so ;;
esac
mkdir -p target/bench-agent
cp "$lib" target/bench-agent/harness.node
export NAPI_RS_NATIVE_LIBRARY_PATH="$PWD/target/bench-agent/harness.node"
