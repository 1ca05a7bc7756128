// Parallel, resumable execution of a sweep's points (sweep.h): a pool of threads pulls point
// indices from an atomic counter; each finished row is appended to results.jsonl with a single
// write(2) under a mutex, so a kill loses at most the points in flight; progress goes to stderr
// (core/progress.h).
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "core/error.h"
#include "core/progress.h"
#include "sweep/results_file.h"
#include "sweep/sweep.h"

namespace fleetsim {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

void write_all(int fd, const std::string& s, const std::string& path) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
    }
    off += static_cast<size_t>(n);
  }
}

}  // namespace

ExistingResults read_results(const std::string& path, const std::vector<std::string>& columns,
                             const ResultsCodec& codec) {
  ExistingResults ex;
  const auto text = read_file_if_exists(path);
  if (!text) return ex;
  size_t pos = 0;
  while (pos < text->size()) {
    const size_t nl = text->find('\n', pos);
    if (nl == std::string::npos) {  // cut by a kill: ignored
      ex.clean = false;
      break;
    }
    std::string line = text->substr(pos, nl - pos);
    pos = nl + 1;
    auto row = codec.parse_jsonl_row(line, columns);
    if (!row) {
      ex.clean = false;
      continue;
    }
    ex.lines.push_back(std::move(line));
    ex.rows.push_back(std::move(*row));
  }
  return ex;
}

ShardSpec parse_shard(const std::string& text, const std::string& option) {
  ShardSpec s;
  const size_t slash = text.find('/');
  auto num = [&](const std::string& t, int* out) {
    if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos)
      return false;
    *out = std::stoi(t);
    return true;
  };
  if (slash == std::string::npos || !num(text.substr(0, slash), &s.index) ||
      !num(text.substr(slash + 1), &s.count) || s.count < 1 || s.index >= s.count) {
    throw InputError(option, "", "expected I/N with 0 <= I < N (e.g. 0/4), got '" + text + "'");
  }
  return s;
}

bool in_shard(int point_index, const ShardSpec& shard) {
  return point_index % shard.count == shard.index;
}

SweepManifest make_manifest(const SweepPlan& plan, const ShardSpec& shard) {
  SweepManifest m;
  m.name = plan.name;
  m.sweep_key = plan.sweep_key;
  m.columns = plan.columns;
  m.skipped = plan.skipped;
  m.combinations = plan.combinations;
  m.shard = shard;
  for (const auto& p : plan.points) {
    m.keys.push_back(p.key);
    m.values_json.push_back(p.values_json);
  }
  return m;
}

std::optional<std::string> read_file_if_exists(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void replace_file_durably(const std::string& path, const std::string& content) {
  const fs::path p(path);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + tmp + ": " + std::strerror(errno));
  try {
    write_all(fd, content, tmp);
    if (::fsync(fd) != 0)
      throw std::runtime_error("cannot fsync " + tmp + ": " + std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
  }
  const std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

namespace {

// Creates the results folder and takes its lock (flock on <out_dir>/.lock, released when the
// descriptor closes); InputError if another sweep holds it.
int lock_results_folder(const std::string& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir, "", "cannot create the results folder: " + ec.message());
  const std::string lock_path = out_dir + "/.lock";
  const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    if (lock_fd >= 0) ::close(lock_fd);
    throw InputError(out_dir, "", "another fleetsim sweep is writing to this folder");
  }
  return lock_fd;
}

void count_status(const SweepRow& row, SweepRunSummary* sum) {
  sum->ok += row.status == "ok";
  sum->invalid += row.status == "invalid";
  sum->error += row.status == "error";
}

// This shard's rows already in results.jsonl, by point (rows of other shards are counted as
// foreign, second copies ignored); a partial last line is cut from the file so that appends
// start on a fresh line.
std::vector<std::optional<SweepRow>> resume_rows(const SweepPlan& plan, const SweepRunOptions& opt,
                                                 const ResultsCodec& codec,
                                                 const std::string& results_path,
                                                 SweepRunSummary* sum) {
  std::unordered_map<std::string, int> shard_key;  // lookups only
  for (const auto& p : plan.points) {
    if (in_shard(p.index, opt.shard)) {
      shard_key.emplace(p.key, p.index);
      ++sum->shard_points;
    }
  }
  ExistingResults ex = read_results(results_path, plan.columns, codec);
  std::vector<std::optional<SweepRow>> rows(plan.points.size());
  std::vector<std::string> kept;
  for (size_t i = 0; i < ex.rows.size(); ++i) {
    const auto it = shard_key.find(ex.rows[i].key);
    if (it == shard_key.end()) {
      ++sum->foreign_rows;
      continue;
    }
    if (rows[it->second]) continue;  // a second copy of a finished point
    SweepRow row = std::move(ex.rows[i]);
    row.point = it->second;
    row.values_json = plan.points[it->second].values_json;
    rows[it->second] = std::move(row);
    ++sum->already_done;
    kept.push_back(ex.lines[i]);
  }
  if (!ex.clean) {
    std::string text;
    for (const auto& l : kept)
      text += l + "\n";
    replace_file_durably(results_path, text);
  }
  return rows;
}

// Runs the points `todo` on opt.jobs threads; each finished row is appended to results_path
// (fdatasync at most once a second), stored in *rows and counted in *sum; progress on
// opt.progress_stream. The first exception a worker throws stops the others and is rethrown.
void run_points(const SweepPlan& plan, const SweepRunOptions& opt, const ResultsCodec& codec,
                const std::vector<int>& todo, const std::string& results_path,
                std::vector<std::optional<SweepRow>>* rows, SweepRunSummary* sum) {
  const int fd = ::open(results_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    throw InputError(results_path, "", std::string("cannot open: ") + std::strerror(errno));
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr failure;
  int finished = 0;
  auto last_sync = Clock::now();
  auto worker = [&] {
    try {
      PointRunner runner(opt.load);
      for (;;) {
        const size_t i = next.fetch_add(1);
        if (i >= todo.size() || stop.load()) break;
        SweepRow row = runner.run(plan, plan.points[todo[i]]);
        const std::string line = codec.jsonl_row(row, plan.columns) + "\n";
        std::lock_guard<std::mutex> lk(mu);
        write_all(fd, line, results_path);
        if (Clock::now() - last_sync > std::chrono::seconds(1)) {
          ::fdatasync(fd);
          last_sync = Clock::now();
        }
        count_status(row, sum);
        (*rows)[row.point] = std::move(row);
        ++finished;
        cv.notify_all();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lk(mu);
      if (!failure) failure = std::current_exception();
      stop = true;
      cv.notify_all();
    }
  };
  ProgressStyle style;
  style.label = "sweep " + plan.name;
  style.unit = "points";
  style.show_failed = true;
  style.line_interval_s = opt.line_interval_s;
  Progress progress(opt.progress, opt.progress_stream, style);
  const int n_threads = std::max(1, std::min<int>(opt.jobs, static_cast<int>(todo.size())));
  std::vector<std::thread> threads;
  for (int t = 0; t < n_threads && !todo.empty(); ++t)
    threads.emplace_back(worker);
  {
    std::unique_lock<std::mutex> lk(mu);
    while (finished < static_cast<int>(todo.size()) && !failure) {
      cv.wait_for(lk, std::chrono::milliseconds(200));
      progress.show(sum->already_done + finished, sum->shard_points, finished,
                    sum->invalid + sum->error, false);
    }
  }
  for (auto& t : threads)
    t.join();
  ::fdatasync(fd);
  ::close(fd);
  if (failure) std::rethrow_exception(failure);
  sum->ran = finished;
  progress.show(sum->already_done + finished, sum->shard_points, finished,
                sum->invalid + sum->error, true);
}

}  // namespace

void write_final_results(const std::string& out_dir, std::vector<std::optional<SweepRow>>* rows,
                         const std::vector<std::string>& columns, const ResultsCodec& codec) {
  std::vector<SweepRow> ordered;
  std::string jsonl;
  for (auto& r : *rows) {
    if (!r) continue;
    jsonl += codec.jsonl_row(*r, columns) + "\n";
    ordered.push_back(std::move(*r));
  }
  replace_file_durably(out_dir + "/results.jsonl", jsonl);
  replace_file_durably(out_dir + "/results.csv", codec.csv(ordered, columns));
}

SweepRunSummary run_sweep(const SweepPlan& plan, const SweepRunOptions& opt,
                          const ResultsCodec& codec) {
  SweepRunSummary sum;
  const auto start = Clock::now();
  struct LockGuard {
    int fd;
    ~LockGuard() { ::close(fd); }
  } lock_guard{lock_results_folder(opt.out_dir)};

  const std::string manifest_path = opt.out_dir + "/manifest.json";
  const std::string manifest = codec.manifest_json(make_manifest(plan, opt.shard));
  if (read_file_if_exists(manifest_path) != manifest) replace_file_durably(manifest_path, manifest);

  // This shard's points, and the rows already there.
  const std::string results_path = opt.out_dir + "/results.jsonl";
  std::vector<std::optional<SweepRow>> rows = resume_rows(plan, opt, codec, results_path, &sum);
  std::vector<int> todo;
  for (const auto& p : plan.points)
    if (in_shard(p.index, opt.shard) && !rows[p.index]) todo.push_back(p.index);
  for (const auto& r : rows)
    if (r) count_status(*r, &sum);
  run_points(plan, opt, codec, todo, results_path, &rows, &sum);

  // Every point of the shard is done: the final files, in point order.
  write_final_results(opt.out_dir, &rows, plan.columns, codec);
  sum.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  return sum;
}

}  // namespace fleetsim
