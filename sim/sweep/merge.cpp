// fleetsim merge: shard result folders → one folder equal to an unsharded run (sweep.h).
#include <filesystem>
#include <set>
#include <unordered_map>

#include "core/error.h"
#include "sweep/results_file.h"
#include "sweep/sweep.h"

namespace fleetsim {

namespace {

// "" when every point has a row; otherwise which points are missing (the first 20, with their
// shard and values) and the shards no input folder was given for.
std::string missing_points(const std::vector<std::optional<SweepRow>>& rows,
                           const SweepManifest& ref, const std::set<int>& shards_given) {
  std::vector<int> missing;
  for (size_t i = 0; i < rows.size(); ++i)
    if (!rows[i]) missing.push_back(static_cast<int>(i));
  if (missing.empty()) return "";
  std::string msg = std::to_string(missing.size()) + " of " + std::to_string(rows.size()) +
                    " points are missing:";
  for (size_t k = 0; k < missing.size() && k < 20; ++k) {
    const int p = missing[k];
    msg += "\n  point " + std::to_string(p) + " (shard " + std::to_string(p % ref.shard.count) +
           "/" + std::to_string(ref.shard.count) + ")";
    for (size_t c = 0; c < ref.columns.size(); ++c)
      msg += (c == 0 ? ": " : ", ") + ref.columns[c] + "=" + ref.values_json[p][c];
  }
  if (missing.size() > 20) msg += "\n  ... and " + std::to_string(missing.size() - 20) + " more";
  std::string absent;
  for (int s = 0; s < ref.shard.count; ++s)
    if (!shards_given.count(s))
      absent +=
          (absent.empty() ? "" : ", ") + std::to_string(s) + "/" + std::to_string(ref.shard.count);
  if (!absent.empty()) msg += "\n  shards with no input folder: " + absent;
  return msg;
}

}  // namespace

MergeSummary merge_sweep_results(const std::string& out_dir, const std::vector<std::string>& inputs,
                                 const ResultsCodec& codec) {
  if (inputs.empty()) throw InputError("merge", "", "expected at least one input folder");
  SweepManifest ref;
  std::string ref_path;
  std::unordered_map<std::string, int> index;  // key → point (lookups only)
  std::vector<std::optional<SweepRow>> rows;
  std::vector<int> source;  // input each row came from
  std::set<int> shards_given;
  for (size_t in = 0; in < inputs.size(); ++in) {
    const std::string mpath = inputs[in] + "/manifest.json";
    const auto text = read_file_if_exists(mpath);
    if (!text) throw InputError(mpath, "", "no such file: not a fleetsim sweep results folder");
    SweepManifest m = codec.parse_manifest(*text, mpath);
    if (in == 0 || m.shard.count == ref.shard.count) shards_given.insert(m.shard.index);
    if (in == 0) {
      ref = std::move(m);
      ref_path = mpath;
      for (size_t i = 0; i < ref.keys.size(); ++i)
        index.emplace(ref.keys[i], static_cast<int>(i));
      rows.resize(ref.keys.size());
      source.assign(ref.keys.size(), -1);
    } else if (m.sweep_key != ref.sweep_key) {
      throw InputError(mpath, "/sweep_key",
                       "results of a different sweep: '" + m.sweep_key + "', but " + ref_path +
                           " has '" + ref.sweep_key + "'");
    }
    const std::string rpath = inputs[in] + "/results.jsonl";
    const ExistingResults ex = read_results(rpath, ref.columns, codec);
    for (const SweepRow& r : ex.rows) {
      const auto it = index.find(r.key);
      if (it == index.end()) {
        throw InputError(rpath, "",
                         "row with key " + r.key + " is not a point of sweep " + ref.name);
      }
      if (rows[it->second]) {
        if (source[it->second] == static_cast<int>(in)) continue;  // resumed twice: same row
        throw InputError(rpath, "",
                         "point " + std::to_string(it->second) + " (key " + r.key +
                             ") is also in " + inputs[source[it->second]] +
                             ": every point must come from exactly one input");
      }
      SweepRow row = r;
      row.point = it->second;
      row.values_json = ref.values_json[it->second];
      rows[it->second] = std::move(row);
      source[it->second] = static_cast<int>(in);
    }
  }
  const std::string missing = missing_points(rows, ref, shards_given);
  if (!missing.empty()) throw InputError("merge", "", missing);
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir, "", "cannot create the output folder: " + ec.message());
  SweepManifest out = ref;
  out.shard = ShardSpec{};
  replace_file_durably(out_dir + "/manifest.json", codec.manifest_json(out));
  write_final_results(out_dir, &rows, ref.columns, codec);
  return MergeSummary{static_cast<int>(rows.size()), static_cast<int>(inputs.size())};
}

}  // namespace fleetsim
