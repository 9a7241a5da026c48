#!/usr/bin/env bash
# Golden tests of the CLI: output (timings masked) and exit code must equal tests/golden/expected.
# UPDATE_GOLDEN=1 rewrites the expected files; review the diff before committing it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
sightline=${SIGHTLINE:?set SIGHTLINE to the binary}
failed=0 passed=0
unset COLUMNS  # text tables fit $COLUMNS, else 160: the goldens are at 160

check() {
  local name=$1 dir=$2
  shift 2
  local actual
  actual=$(cd "$dir" && "$sightline" "$@" 2>&1; echo "exit $?")
  actual=$(printf '%s\n' "$actual" | sed -E 's/"load_seconds":[0-9.e+-]+/"load_seconds":"masked"/; s/^(loaded in +).*/\1masked/')
  if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
    printf '%s\n' "$actual" >"$here/expected/$name"
  elif diff -u "$here/expected/$name" <(printf '%s\n' "$actual"); then
    passed=$((passed + 1))
  else
    echo "golden mismatch: $name"
    failed=$((failed + 1))
  fi
}

data=$here/../data
inputs=$here/inputs
for trace in kin_docs_after_fix_h100 hta_inference_rank1_oldfmt hta_amd_mi250_minitoy catapult_async_begin_end catapult_flow_simple; do
  check "info_$trace.txt" "$data" info "$trace.json.gz"
  check "info_$trace.json" "$data" info "$trace.json.gz" --format json
done
# Nsight Systems reports: a real export (gzip), a truncated one, an SQLite file of something else.
check info_fuser_nsys_h200_electsync.txt "$data" info fuser_nsys_h200_electsync.sqlite.gz
check info_fuser_nsys_h200_electsync.json "$data" info fuser_nsys_h200_electsync.sqlite.gz --format json
check report_nsys_electsync.txt "$data" report fuser_nsys_h200_electsync.sqlite.gz --only temporal_breakdown,launch_stats,kernel_type_breakdown
check report_nsys_electsync_hta.txt "$data" report fuser_nsys_h200_electsync.sqlite.gz --mode hta --only temporal_breakdown,launch_stats,kernel_type_breakdown
check error_nsys_truncated.txt "$inputs" info truncated_nsys.sqlite
check error_nsys_not_nsight.txt "$inputs" info not_nsight.sqlite
check diff_compare_pair.txt "$data" diff hta_trace_compare_base.json.gz hta_trace_compare_test.json.gz
check diff_compare_pair_hta.json "$data" diff hta_trace_compare_base.json.gz hta_trace_compare_test.json.gz --mode hta --format json
check diff_compare_pair_ops.csv "$data" diff hta_trace_compare_base.json.gz hta_trace_compare_test.json.gz --format csv --table ops
check report_kernels.txt "$data" report hta_amd_mi250_minitoy.json.gz --only kernel_breakdown,repeated_kernels
check usage_report_csv_without_table.txt "$data" report hta_cp_simple_add_input.json.gz --format csv
check usage_diff_csv_without_table.txt "$data" diff hta_trace_compare_base.json.gz hta_trace_compare_test.json.gz --format csv
check report_sample_idle.txt "$data" report hta_cp_simple_add_input.json.gz --only idle_breakdown,idle_causes,temporal_breakdown
# The headline (three costliest findings, idle split) and the analyses Insights reads.
check report_headline.txt "$data" report hta_cp_simple_add_input.json.gz --only insights
# report --explain: the idle ledger every verdict reads (per cause: total, gaps, longest, top CPU events, fix).
check report_explain_ledger.txt "$data" report hta_cp_simple_add_input.json.gz --explain --only ledger
# HTA's own critical-path test trace and instance (HTA asserts 315 nodes on the path).
check report_critical_path_hta.txt "$data" report hta_cp_simple_add_input.json.gz --mode hta --only critical_path \
  --annotation '[param|pytorch.model.alex_net|0|0|0|measure|forward]' --instance 1
check error_truncated.txt "$inputs" info truncated.json
check error_truncated_gz.txt "$inputs" info truncated.json.gz
check error_cut_before_events.txt "$inputs" info cut_before_events.json
check error_not_events.txt "$inputs" info not_events.json
check info_trailing_commas.txt "$inputs" info trailing_commas.json
# Launches but no GPU activity (CUPTI activity not recorded): a warning, and no idle verdict.
check warning_no_gpu_activity.txt "$inputs" info no_gpu_activity.json
check warning_no_gpu_activity_report.txt "$inputs" report no_gpu_activity.json --only temporal_breakdown,insights
# PyTorch memory snapshots (a pickle): a tiny one's info and memory tables; one that would call
# os.system is refused at its STACK_GLOBAL, with nothing run.
check info_tiny_memory_snapshot.txt "$inputs" info tiny_memory_snapshot.pickle
check report_tiny_memory_snapshot.txt "$inputs" report tiny_memory_snapshot.pickle --only memory_peak,memory_at_peak,memory_leaks,memory_churn,memory_timeline --format json
check error_code_calling_pickle.txt "$inputs" info code_calling.pickle
check error_not_json.txt "$inputs" info not_json.json
check error_execution_trace.txt "$inputs" info execution_trace.json
check error_events_not_array.txt "$inputs" info events_not_array.json
check error_missing_file.txt "$inputs" info no_such_file.json
check usage_missing_argument.txt "$inputs" info
check usage_bad_format.txt "$data" info kin_docs_after_fix_h100.json.gz --format xml
# Jobs: a directory of rank traces, --job files, and the folder errors.
check info_job_small.txt "$inputs" info job_small
check info_job_small.json "$inputs" info job_small --format json
check info_job_files.txt "$inputs" info --job job_small/rank_2.trace.json job_small/worker0.json job_small/notes.txt
check report_job_small_collectives.txt "$inputs" report job_small --only collectives,stragglers,clock_offsets,outliers
check report_job_small.json "$inputs" report job_small --format json --only temporal_breakdown,collectives,stragglers
check report_job_small_rank1.csv "$inputs" report job_small --rank 1 --format csv --table collectives
check usage_job_no_such_rank.txt "$inputs" report job_small --rank 9
check error_job_truncated_rank.txt "$inputs" info job_truncated
# A rank cut off after complete events loads with a warning naming rank and file.
check warning_job_cut_rank.txt "$inputs" info job_cut
check warning_job_cut_rank_report.txt "$inputs" report job_cut --only stragglers
# A folder of unrelated traces (MI300 rank of 8, H100 inference, an MI300 run 28 days later):
# warned on stderr; the collectives stay on one job clock (no arrival in millions of seconds).
check warning_job_unrelated.txt "$inputs" info job_unrelated
check warning_job_unrelated_report.txt "$inputs" report job_unrelated --only collectives,clock_offsets
check error_job_duplicate_rank.txt "$inputs" info job_dup
# Two files claiming one rank: --rank-from order (or name) is the way forward the error names.
check info_job_dup_rank_from_order.txt "$inputs" info job_dup --rank-from order
check error_job_not_traces.txt "$inputs" info job_not_traces
empty_parent=$(mktemp -d)
mkdir "$empty_parent/empty_job"
check error_job_empty.txt "$empty_parent" info empty_job
rm -rf "$empty_parent"

echo "golden: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
