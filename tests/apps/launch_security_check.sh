#!/bin/sh
# strata-launch and the job's security (apps/CMakeLists.txt): every task of a job gets the same
# fresh token file, readable by this user only and removed when the launcher exits; a given
# token file, the TLS files and the bind host reach every task; --nojob_token gives none.
#   launch_security_check.sh STRATA_LAUNCH LAUNCH_TASK
set -u
LAUNCH=$1
TASK=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export LAUNCH_TASK_SYNC_DIR=$WORK  # the workers end only once the ps has printed
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$WORK/out"; exit 1; }

"$LAUNCH" --workers 2 --ps 1 -- "$TASK" security > "$WORK/out" 2>&1 || fail "the launch failed"
[ "$(grep -c 'token file .* mode 600 hash' "$WORK/out")" -eq 3 ] ||
  fail "not every task saw a 0600 token file"
[ "$(sed -n 's/.*token file \([^ ]*\) .* hash \([0-9]*\)$/\1 \2/p' "$WORK/out" | sort -u | wc -l)" -eq 1 ] ||
  fail "the tasks saw different token files"
file=$(sed -n 's/.*token file \([^ ]*\) mode.*/\1/p' "$WORK/out" | head -1)
[ ! -e "$file" ] || fail "the token file $file outlived the launcher"
[ ! -e "$(dirname "$file")" ] || fail "the token folder outlived the launcher"

"$LAUNCH" --workers 2 -- "$TASK" security > "$WORK/out2" 2>&1 || fail "the second launch failed"
first=$(sed -n 's/.*hash \([0-9]*\)$/\1/p' "$WORK/out" | head -1)
second=$(sed -n 's/.*hash \([0-9]*\)$/\1/p' "$WORK/out2" | head -1)
[ "$first" != "$second" ] || fail "two jobs got the same token"

echo "given-token" > "$WORK/token"
printf -- '-----BEGIN CERTIFICATE-----\nx\n' > "$WORK/cert.pem"
printf -- '-----BEGIN PRIVATE KEY-----\nx\n' > "$WORK/key.pem"
cp "$WORK/cert.pem" "$WORK/ca.pem"
"$LAUNCH" --workers 2 --job_token_file "$WORK/token" --tls_cert_file "$WORK/cert.pem" \
  --tls_key_file "$WORK/key.pem" --tls_ca_file "$WORK/ca.pem" --bind_host 0.0.0.0 \
  -- "$TASK" security > "$WORK/out" 2>&1 || fail "the launch with given files failed"
[ "$(grep -c "token file $WORK/token mode" "$WORK/out")" -eq 2 ] || fail "the given token file did not reach every task"
[ "$(grep -c "tls $WORK/cert.pem $WORK/key.pem $WORK/ca.pem bind 0.0.0.0" "$WORK/out")" -eq 2 ] ||
  fail "the TLS files and bind host did not reach every task"
[ -e "$WORK/token" ] || fail "a given token file was removed"

"$LAUNCH" --workers 2 --nojob_token -- "$TASK" security > "$WORK/out" 2>&1 || fail "--nojob_token failed"
[ "$(grep -c "no token file" "$WORK/out")" -eq 2 ] || fail "--nojob_token still gave a token"

"$LAUNCH" --workers 1 --job_token_file "$WORK/missing" -- "$TASK" security > "$WORK/out" 2>&1 &&
  fail "a missing token file was accepted"
grep -q "the job token file '$WORK/missing'.*cannot be read" "$WORK/out" ||
  fail "the missing token file was not named"
echo "PASS"
