#!/usr/bin/env bash
# Builds every fuzz target and runs each for a short while (20 s, or
# $FUZZ_SMOKE_SECONDS): the checked-in seeds, the inputs of past crashes among
# them, and whatever libFuzzer finds from there. Fails on the first target
# that crashes, leaks or breaks a property.
set -euo pipefail
fuzz="$(cd "$(dirname "$0")" && pwd)"
seconds="${FUZZ_SMOKE_SECONDS:-20}"
targets=(json varlink-call interface-description desktop-entry flatpak-info memory-map ostree-commit keyring config)

"$fuzz/build.sh" "${targets[@]}"
for target in "${targets[@]}"; do
    echo "== fuzz-$target, ${seconds}s" >&2
    log="$(mktemp)"
    if ! "$fuzz/run.sh" "$target" "$seconds" >"$log" 2>&1; then
        tail -n 60 "$log" >&2
        rm -f "$log"
        echo "fuzz-$target failed; to reproduce, run the binary on the input it saved (Tests/Fuzz/README.md)" >&2
        exit 1
    fi
    grep -E '^(Done|#[0-9]+ *DONE)|stat::number_of_executed_units|stat::average_exec_per_sec' "$log" >&2 || true
    rm -f "$log"
done
