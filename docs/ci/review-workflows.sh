#!/usr/bin/env bash
# Predict what a pull request's workflow changes do to CI time and cost, into the job summary.
#
# Runs in a GitHub Actions job on `pull_request` (see docs/ci/review-workflows.yml), in the
# checkout of the pull request with the base commit fetched (fetch-depth: 0). For each workflow
# file in .github/workflows/ that the pull request adds or changes, it appends
# `gharuntime predict FILE --model MODEL --base-ref BASE --format markdown` to
# $GITHUB_STEP_SUMMARY (and prints it). A changed reusable workflow (`on: workflow_call`) is
# reviewed by predict through the workflows that call it, since GitHub records the runs under
# the caller; predict's heading names the caller shown. A workflow the pull request removes is
# listed, its name escaped. Any file name git can hold is read as it is (NUL-separated): spaces,
# tabs, line breaks, non-ASCII. Files in subfolders of .github/workflows/ are not workflows to
# GitHub and are skipped.
#
# Environment (GitHub sets the first three):
#   GITHUB_STEP_SUMMARY      the job summary file to append to
#   GITHUB_EVENT_PATH        the event payload: the base commit is pull_request.base.sha
#   GITHUB_WORKSPACE         the checkout (default: the current folder)
#   GHARUNTIME_MODEL         the model folder (`gharuntime learn --out` or
#                            `gharuntime baseline ... --model-out`) [default: .github/gharuntime-model]
#   GHARUNTIME_BASE          the base commit, instead of the event payload's
#   GHARUNTIME_ARGS          more predict options, split at spaces, e.g.
#                            "--public --prices .github/our-rates.yml --threshold 2"
#   GHARUNTIME_COMMENT_FILE  when set, also write there the body of a pull-request comment: a
#                            first line `<!-- gharuntime-review-workflows beyond-noise=true -->`
#                            (or `=false`), then the reviews whose Δ is outside the repository's
#                            run-to-run noise (predict's JSON `beyond_noise`). The workflow's
#                            optional `comment` job posts it.
#
# Exit 0 when every changed workflow was reviewed; 1 when predict refused one (the others are
# still reviewed; its message is in the log, never in the summary); 2 on a bad setting.
set -euo pipefail

die() {
  printf 'review-workflows: %s\n' "$*" >&2
  exit 2
}

cd "${GITHUB_WORKSPACE:-.}"
: "${GITHUB_STEP_SUMMARY:?is not set: run this in a GitHub Actions job, or set it to a file}"
top=$(git rev-parse --show-toplevel 2>/dev/null) || die "$(pwd) is not a git checkout"
cd "$top"

model="${GHARUNTIME_MODEL:-.github/gharuntime-model}"
base="${GHARUNTIME_BASE:-}"
if [ -z "$base" ]; then
  : "${GITHUB_EVENT_PATH:?is not set: set GHARUNTIME_BASE to the base commit instead}"
  base=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["pull_request"]["base"]["sha"])' "$GITHUB_EVENT_PATH" 2>/dev/null) \
    || die "no pull_request.base.sha in $GITHUB_EVENT_PATH (run it on pull_request, or set GHARUNTIME_BASE)"
fi
case "$base" in
  -* | *[[:cntrl:]]* | *:*) die "the base $(printf '%q' "$base") is not a git revision; give a commit, branch or tag" ;;
esac
base_sha=$(git rev-parse --verify --quiet --end-of-options "$base^{commit}") \
  || die "the base commit $(printf '%q' "$base") is not in this checkout; fetch it (actions/checkout with fetch-depth: 0)"
if [ ! -d "$model" ]; then
  die "no model folder at $model; set GHARUNTIME_MODEL"
fi
read -r -a extra <<<"${GHARUNTIME_ARGS:-}"
comment="${GHARUNTIME_COMMENT_FILE:-}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A file name as a Markdown code span: shown as written, never read as Markdown, HTML, a link or
# an @mention. Control, format (bidi, zero-width), separator and undecodable characters, and the
# backslash, are shown as escapes (\u202e, \n, \xff, \\), so two names that differ never look alike.
code_name() {
  python3 - "$1" <<'PY'
import re, sys, unicodedata

def visible(ch: str) -> str:
    if ch == "\\":
        return "\\\\"
    n = ord(ch)
    if 0xDC80 <= n <= 0xDCFF:  # a byte that is not UTF-8 (surrogateescape)
        return f"\\x{n - 0xDC00:02x}"
    if ch != " " and unicodedata.category(ch) in {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"}:
        return {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(ch) or (
            f"\\u{n:04x}" if n <= 0xFFFF else f"\\U{n:08x}"
        )
    return ch

text = "".join(visible(ch) for ch in sys.argv[1])
fence = "`" * (max((len(r) for r in re.findall("`+", text)), default=0) + 1)
print(f"{fence} {text} {fence}", end="")
PY
}

# The review's `beyond_noise` from predict's JSON: true, false, or unknown (a gharuntime that
# does not give it).
beyond_noise() {
  python3 -c '
import json, sys
value = json.load(open(sys.argv[1], encoding="utf-8")).get("beyond_noise")
print("true" if value is True else "false" if value is False else "unknown")
' "$1"
}

git -c core.quotePath=false diff -z --no-renames --name-status --end-of-options "$base_sha" HEAD \
  -- .github/workflows >"$work/changed" \
  || die "git diff $base_sha HEAD failed"

changed=0
failed=0
beyond=0
within=0
unknown=0
removed=0
n=0
while IFS= read -r -d '' status && IFS= read -r -d '' path; do
  case "$path" in .github/workflows/*/*) continue ;; .github/workflows/*.yml | .github/workflows/*.yaml) ;; *) continue ;; esac
  changed=$((changed + 1))
  n=$((n + 1))
  if [ "$status" = "D" ]; then
    removed=$((removed + 1))
    printf '### %s: removed by this change\n\n' "$(code_name "$path")" | tee -a "$GITHUB_STEP_SUMMARY"
    continue
  fi
  review="$work/review-$n.md"
  rc=0
  gharuntime predict --model "$model" --base-ref "$base_sha" --format markdown \
    ${extra[@]+"${extra[@]}"} -- "$path" <"/dev/null" >"$review" || rc=$?
  if [ "$rc" -ne 0 ]; then
    failed=$((failed + 1))
    printf '### %s: not reviewed (gharuntime predict exited %s; its message is in the job log)\n\n' \
      "$(code_name "$path")" "$rc" | tee -a "$GITHUB_STEP_SUMMARY"
    continue
  fi
  tee -a "$GITHUB_STEP_SUMMARY" <"$review"
  printf '\n' >>"$GITHUB_STEP_SUMMARY"
  if [ -n "$comment" ]; then
    rc=0
    gharuntime predict --model "$model" --base-ref "$base_sha" --format json \
      ${extra[@]+"${extra[@]}"} -- "$path" <"/dev/null" >"$work/review-$n.json" || rc=$?
    verdict=unknown
    if [ "$rc" -eq 0 ]; then
      verdict=$(beyond_noise "$work/review-$n.json") || verdict=unknown
    fi
    case "$verdict" in
      true)
        beyond=$((beyond + 1))
        cat "$review" >>"$work/comment-body"
        printf '\n' >>"$work/comment-body"
        ;;
      false) within=$((within + 1)) ;;
      *)
        unknown=$((unknown + 1))
        printf 'review-workflows: predict gave no beyond_noise for %q; not put in the comment\n' "$path" >&2
        ;;
    esac
  fi
done <"$work/changed"

if [ "$changed" -eq 0 ]; then
  echo "No workflow file changed: nothing to review." | tee -a "$GITHUB_STEP_SUMMARY"
fi

if [ -n "$comment" ]; then
  {
    if [ "$beyond" -gt 0 ]; then
      printf '<!-- gharuntime-review-workflows beyond-noise=true -->\n'
      printf '## Predicted CI time and cost of this pull request\n\n'
      # GitHub refuses a comment over 65,536 characters: whole reviews, up to about 60,000
      python3 -c '
import sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
if len(text) > 60000:
    cut = text.rfind("\n### ", 0, 60000)
    text = text[: cut if cut > 0 else 60000] + "\n\n(Cut here: the whole review is in the job summary.)\n"
sys.stdout.write(text)
' "$work/comment-body"
    else
      printf '<!-- gharuntime-review-workflows beyond-noise=false -->\n'
      printf '## Predicted CI time and cost of this pull request\n\n'
      printf 'None of the workflow changes reviewed in the latest push is known to move the '
      printf "predicted CI time outside the repository's run-to-run noise.\n"
    fi
    printf '\nNot shown here: %s workflow file(s) within the noise, %s without a noise verdict ' \
      "$within" "$unknown"
    printf '(a gharuntime that gives no `beyond_noise`), %s removed, %s not reviewed. ' "$removed" "$failed"
    printf 'The whole review is in the job summary.\n'
  } >"$comment.tmp"
  mv -- "$comment.tmp" "$comment"
fi

if [ "$failed" -gt 0 ]; then
  printf 'review-workflows: %s workflow file(s) not reviewed; see the messages above\n' "$failed" >&2
  exit 1
fi
