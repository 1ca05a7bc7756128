#include "core/error.h"

namespace fleetsim {

namespace {
std::string compose(const std::string& file, const std::string& pointer, const std::string& msg) {
  std::string out = file.empty() ? std::string("<input>") : file;
  out += ":";
  out += pointer.empty() ? std::string("/") : pointer;
  out += ": ";
  out += msg;
  return out;
}
}  // namespace

InputError::InputError(std::string file, std::string pointer, std::string message)
    : std::runtime_error(compose(file, pointer, message)),
      file_(std::move(file)),
      pointer_(std::move(pointer)),
      message_(std::move(message)) {}

void assertion_failed(const char* expr, const char* file, int line) {
  throw InternalError(std::string("internal error: assertion '") + expr + "' failed at " + file +
                      ":" + std::to_string(line));
}

}  // namespace fleetsim
