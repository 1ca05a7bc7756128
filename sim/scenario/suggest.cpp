// "Did you mean": Levenshtein distance between short strings (keys, enum values, system names).
#include <algorithm>
#include <vector>

#include "scenario/scenario.h"

namespace fleetsim {

namespace {
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  if (word.size() > 256) return "";
  // A candidate that starts with the word ("p6-b200" → "p6-b200.48xlarge") wins outright.
  std::string prefixed;
  for (const auto& c : candidates) {
    if (word.size() >= 3 && c.size() > word.size() && c.compare(0, word.size(), word) == 0 &&
        (prefixed.empty() || c.size() < prefixed.size())) {
      prefixed = c;
    }
  }
  if (!prefixed.empty()) return prefixed;
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  std::string best;
  size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

}  // namespace fleetsim
