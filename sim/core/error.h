// Error types. Bad user input throws InputError, which names the file, the JSON pointer (or
// other location such as a CSV line) and what was expected; the CLI prints it and exits 2.
// Bugs are caught by FLEETSIM_ASSERT, which throws InternalError (exit 1) instead of aborting,
// so library code never calls exit().
#pragma once

#include <stdexcept>
#include <string>

namespace fleetsim {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string pointer, std::string message);
  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_, pointer_, message_;
};

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void assertion_failed(const char* expr, const char* file, int line);

}  // namespace fleetsim

#define FLEETSIM_ASSERT(cond) \
  ((cond) ? static_cast<void>(0) : ::fleetsim::assertion_failed(#cond, __FILE__, __LINE__))
