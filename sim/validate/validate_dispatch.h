// Dispatch benchmark rows (validation/dispatch-benchmarks.csv, the format of
// docs/validation.md#dispatch-benchmark-rows): one expert-parallel dispatch or combine call of a
// MoE communication library → the dispatch model of sim/coll/dispatch.h on the row's system →
// the call's time (time_us) or its bandwidth under the row's definition (bandwidth_gbps with
// bw_def: rank_copies, rdma_node_copies, logical, pairs).
//
// validate_reference (validate.h) hands a CSV whose header has a `library` column here. The
// summary keys `mape_by_group` by "library metric" ("deepep time_us"), EFA systems as their own
// group ("uccl-ep time_us EFA").
#pragma once

#include <string>

#include "core/csv.h"
#include "validate/validate.h"

namespace fleetsim {

// True for a header with the dispatch rows' columns.
bool is_dispatch_table(const CsvTable& t);

ValidationReport validate_dispatch_table(const CsvTable& t, const std::string& csv_path,
                                         const std::string& data_dir,
                                         const ValidateOptions& options);

// The text `fleetsim validate` prints for a dispatch report (rows, skips, MAPE per group).
std::string dispatch_report_text(const ValidationReport& rep);

}  // namespace fleetsim
