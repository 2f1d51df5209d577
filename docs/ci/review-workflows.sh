#!/usr/bin/env bash
# Predict what a pull request's workflow changes do to CI time and cost, into the job summary.
#
# Runs in a GitHub Actions job on `pull_request` (see docs/ci/review-workflows.yml), in the
# checkout of the pull request with the base commit fetched (fetch-depth: 0). For each workflow
# file under .github/workflows/ that the pull request adds or changes, it writes
# `gharuntime predict FILE --base-ref BASE --format markdown` to $GITHUB_STEP_SUMMARY (and to
# stdout); a workflow it removes is listed. Nothing else is written.
#
# Environment (GitHub sets the first three):
#   GITHUB_STEP_SUMMARY  the job summary file to append to
#   GITHUB_EVENT_PATH    the event payload: the base commit is pull_request.base.sha
#   GITHUB_WORKSPACE     the checkout (default: the current folder)
#   GHARUNTIME_MODEL     the model folder (`gharuntime baseline ... --model-out`)
#                        [default: .github/gharuntime-model]
#   GHARUNTIME_BASE      the base commit, instead of the event payload's
#   GHARUNTIME_ARGS      more predict options, e.g. "--public --prices .github/our-rates.yml"
set -euo pipefail
cd "${GITHUB_WORKSPACE:-.}"
: "${GITHUB_STEP_SUMMARY:?is not set: run this in a GitHub Actions job, or set it to a file}"
model="${GHARUNTIME_MODEL:-.github/gharuntime-model}"
base="${GHARUNTIME_BASE:-}"
if [ -z "$base" ]; then
  : "${GITHUB_EVENT_PATH:?is not set: set GHARUNTIME_BASE to the base commit instead}"
  base=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["pull_request"]["base"]["sha"])' "$GITHUB_EVENT_PATH") \
    || { echo "review-workflows: no pull_request.base.sha in $GITHUB_EVENT_PATH (run it on pull_request)" >&2; exit 2; }
fi
if [ ! -d "$model" ]; then
  echo "review-workflows: no model folder at $model; set GHARUNTIME_MODEL" >&2
  exit 2
fi
read -r -a extra <<<"${GHARUNTIME_ARGS:-}"
changed=0
while IFS=$'\t' read -r status path; do
  case "$path" in *.yml|*.yaml) ;; *) continue ;; esac
  changed=$((changed + 1))
  if [ "$status" = "D" ]; then
    printf '### %s: removed by this change\n\n' "$path" | tee -a "$GITHUB_STEP_SUMMARY"
    continue
  fi
  gharuntime predict "$path" --model "$model" --base-ref "$base" --format markdown "${extra[@]}" \
    | tee -a "$GITHUB_STEP_SUMMARY"
  printf '\n' >>"$GITHUB_STEP_SUMMARY"
done < <(git diff --no-renames --name-status "$base" HEAD -- .github/workflows)
if [ "$changed" -eq 0 ]; then
  echo "No workflow file changed: nothing to review." | tee -a "$GITHUB_STEP_SUMMARY"
fi
