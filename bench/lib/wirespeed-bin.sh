# Sourced by bench scripts from the repository's root: sets `bin` to the wirespeed binary to
# measure, $WIRESPEED_BIN when given (another build, e.g. an older commit's, for a before/after
# pair), else this tree's release build, built first.
if [ -n "${WIRESPEED_BIN:-}" ]; then
    bin=$WIRESPEED_BIN
else
    cargo build --release -q -p wirespeed
    bin=${CARGO_TARGET_DIR:-$PWD/target}/release/wirespeed
fi
