// Reading a Hugging Face config.json key by key (internal to sim/scenario/hf_config.cpp; it
// includes nlohmann_json through json_reader.h). Every read marks the key as used and records
// the origin of the fleetsim field it sets; finish() then refuses any key neither read nor on
// the list of keys without effect on compute, so no key is dropped silently.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "scenario/json_reader.h"

namespace fleetsim {

class HfReader {
 public:
  HfReader(const jsonr::json& j, std::string file);
  // The object at `key` as a reader of its own (errors and origins name "/key/..."): read its
  // keys, call its finish(), then adopt() it.
  HfReader child(const std::string& key);
  // Takes a finished child's origins and ignored keys.
  void adopt(const HfReader& child);

  [[noreturn]] void fail(const std::string& ptr, const std::string& msg) const;
  std::string model_type();
  // Present with a non-null value.
  bool present(const std::string& key) const;
  // Present, null or not.
  bool has(const std::string& key) const { return j_.contains(key); }
  std::string str(const std::string& key);
  // Present with a string value (a key that may hold a number or a word, as "auto").
  bool is_string(const std::string& key) const;
  // Present with a numeric value (a switch some releases wrote as a number, as 4 for true).
  bool is_number(const std::string& key) const;
  // Required integer in [lo, hi]; `field` ("/attention/heads", "" = none) records its origin.
  int64_t integer(const std::string& key, int64_t lo, int64_t hi, const std::string& field);
  // The integer at `key` as integer() reads it, or `dflt` when the key is absent or null.
  int64_t integer_or(const std::string& key, int64_t dflt, int64_t lo, int64_t hi,
                     const std::string& field);
  bool boolean_or(const std::string& key, bool dflt, const std::string& field);
  // Required number (integer or not) in [lo, hi].
  double number(const std::string& key, double lo, double hi);
  std::vector<std::string> string_list(const std::string& key);
  // A per-layer list of two words (as layer_types' "full_attention" / "linear_attention"): one
  // entry per layer, each `on` (true) or `off` (false); anything else names the entry.
  std::vector<bool> word_flags(const std::string& key, int layers, const std::string& on,
                               const std::string& off);
  std::vector<int64_t> int_list(const std::string& key, int64_t lo, int64_t hi);
  // A key read and found to have no effect on compute (no-op when absent).
  void ignore(const std::string& key);
  // Records (or replaces) the origin of `field` with a sentence.
  void note(const std::string& field, const std::string& text);
  // The config key that set `field` ("/num_local_experts"), or "" when none did.
  std::string origin_of(const std::string& field) const;
  // Refuses every key neither read nor known to be without effect on compute.
  void finish(const std::string& config_class);

  std::vector<std::pair<std::string, std::string>> origin() const;
  const std::vector<std::string>& ignored() const { return ignored_; }

 private:
  struct Origin {
    std::string field, text, key;
  };
  void use(const std::string& key) { used_.push_back(key); }
  // The value at `key`, marked used; "missing required key" (naming it) when it is absent.
  const jsonr::json& required(const std::string& key);
  void record(const std::string& field, const std::string& text, const std::string& key);

  HfReader(const jsonr::json& j, std::string file, std::string prefix);

  const jsonr::json& j_;
  std::string file_;
  std::string prefix_;  // JSON pointer of this object in the file ("" = the root)
  std::vector<std::string> used_;
  std::vector<std::string> ignored_;
  std::vector<Origin> origin_;
};

}  // namespace fleetsim
