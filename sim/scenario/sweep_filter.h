// Filter expressions of sweep files (internal to sim/scenario: it uses nlohmann_json through
// json_reader.h). A filter is parsed once into a flat syntax tree and evaluated per point:
//   expr    := or;  or := and ('||' and)*;  and := cmp ('&&' cmp)*
//   cmp     := sum (('=='|'!='|'<'|'<='|'>'|'>=') sum)?
//   sum     := prod (('+'|'-') prod)*;  prod := unary (('*'|'/'|'%') unary)*
//   unary   := ('!'|'-') unary | primary
//   primary := number | 'string' | {/json/pointer} | cluster_gpus | true | false | '(' expr ')'
// `{/p}` is the point's value at pointer /p (number, boolean as 1/0, or string); cluster_gpus is
// count × nodes per unit × GPUs per node of the point's cluster. Errors (syntax, a pointer the
// point lacks, arithmetic on strings, division by zero) throw InputError at the filter's pointer.
#pragma once

#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "scenario/json_reader.h"
#include "scenario/scenario.h"

namespace fleetsim::sweep_filter {

using jsonr::json;
using jsonr::type_name;

struct Value {
  bool is_str = false;
  double num = 0;
  std::string str;
};

class Filter {
 public:
  Filter(std::string name, const std::string& text, std::string file, std::string ptr,
         std::string data_dir)
      : name_(std::move(name)),
        text_(text),
        file_(std::move(file)),
        ptr_(std::move(ptr)),
        data_dir_(std::move(data_dir)) {
    root_ = parse_or();
    skip_ws();
    if (pos_ < text_.size()) error("unexpected '" + text_.substr(pos_, 1) + "'");
  }
  const std::string& name() const { return name_; }
  bool keep(const json& doc, int combination) {
    const Value v = eval(root_, doc, combination);
    if (v.is_str) fail("evaluates to a string, expected a condition");
    return v.num != 0;
  }

 private:
  enum class Op {
    kNum,
    kStr,
    kPtr,
    kGpus,
    kNot,
    kNeg,
    kAdd,
    kSub,
    kMul,
    kDiv,
    kMod,
    kEq,
    kNe,
    kLt,
    kLe,
    kGt,
    kGe,
    kAnd,
    kOr
  };
  struct Node {
    explicit Node(Op o) : op(o) {}
    Op op;
    double num = 0;
    std::string text;
    json::json_pointer ptr;
    int a = -1, b = -1;
  };

  [[noreturn]] void error(const std::string& msg) const {
    throw InputError(file_, ptr_,
                     "at character " + std::to_string(pos_ + 1) + " of '" + text_ + "': " + msg);
  }
  [[noreturn]] void fail(const std::string& msg) const {
    throw InputError(file_, ptr_, "filter '" + name_ + "' " + msg);
  }
  void skip_ws() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool eat(const char* s) {
    skip_ws();
    const size_t n = std::strlen(s);
    if (text_.compare(pos_, n, s) != 0) return false;
    pos_ += n;
    return true;
  }
  int add(Node n) {
    nodes_.push_back(std::move(n));
    return static_cast<int>(nodes_.size()) - 1;
  }
  int bin(Op op, int a, int b) {
    Node n{op};
    n.a = a;
    n.b = b;
    return add(std::move(n));
  }
  int parse_or() {
    int a = parse_and();
    while (eat("||"))
      a = bin(Op::kOr, a, parse_and());
    return a;
  }
  int parse_and() {
    int a = parse_cmp();
    while (eat("&&"))
      a = bin(Op::kAnd, a, parse_cmp());
    return a;
  }
  int parse_cmp() {
    const int a = parse_sum();
    static const std::pair<const char*, Op> kOps[] = {{"==", Op::kEq}, {"!=", Op::kNe},
                                                      {"<=", Op::kLe}, {">=", Op::kGe},
                                                      {"<", Op::kLt},  {">", Op::kGt}};
    for (const auto& [s, op] : kOps)
      if (eat(s)) return bin(op, a, parse_sum());
    return a;
  }
  int parse_sum() {
    int a = parse_prod();
    for (;;) {
      if (eat("+")) {
        a = bin(Op::kAdd, a, parse_prod());
      } else if (eat("-")) {
        a = bin(Op::kSub, a, parse_prod());
      } else {
        return a;
      }
    }
  }
  int parse_prod() {
    int a = parse_unary();
    for (;;) {
      if (eat("*")) {
        a = bin(Op::kMul, a, parse_unary());
      } else if (eat("/")) {
        a = bin(Op::kDiv, a, parse_unary());
      } else if (eat("%")) {
        a = bin(Op::kMod, a, parse_unary());
      } else {
        return a;
      }
    }
  }
  int parse_unary() {
    if (eat("!")) {
      if (text_.compare(pos_, 1, "=") == 0) error("unexpected '='");
      return bin(Op::kNot, parse_unary(), -1);
    }
    if (eat("-")) return bin(Op::kNeg, parse_unary(), -1);
    return parse_primary();
  }
  int parse_primary() {
    skip_ws();
    if (pos_ >= text_.size()) error("expected a value, got the end of the expression");
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      const int e = parse_or();
      if (!eat(")")) error("expected ')'");
      return e;
    }
    if (c == '{') {
      const size_t end = text_.find('}', pos_);
      if (end == std::string::npos) error("expected '}' closing the JSON pointer");
      Node n{Op::kPtr};
      n.text = text_.substr(pos_ + 1, end - pos_ - 1);
      try {
        n.ptr = json::json_pointer(n.text);
      } catch (const json::exception&) {
        error("'" + n.text + "' is not a JSON pointer");
      }
      if (n.text.empty()) error("expected a JSON pointer inside {}");
      pos_ = end + 1;
      return add(std::move(n));
    }
    if (c == '\'') {
      const size_t end = text_.find('\'', pos_ + 1);
      if (end == std::string::npos) error("expected a closing quote");
      Node n{Op::kStr};
      n.text = text_.substr(pos_ + 1, end - pos_ - 1);
      pos_ = end + 1;
      return add(std::move(n));
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      size_t used = 0;
      Node n{Op::kNum};
      try {
        n.num = std::stod(text_.substr(pos_), &used);
      } catch (const std::exception&) {
        error("expected a number");
      }
      pos_ += used;
      return add(std::move(n));
    }
    for (const auto& [word, op, num] :
         {std::tuple{"cluster_gpus", Op::kGpus, 0.0}, std::tuple{"true", Op::kNum, 1.0},
          std::tuple{"false", Op::kNum, 0.0}}) {
      const size_t n = std::strlen(word);
      if (text_.compare(pos_, n, word) == 0 &&
          (pos_ + n == text_.size() ||
           !std::isalnum(static_cast<unsigned char>(text_[pos_ + n])))) {
        pos_ += n;
        Node node{op};
        node.num = num;
        return add(std::move(node));
      }
    }
    error("expected a number, 'string', {/pointer}, cluster_gpus, true, false or '('");
  }

  double number(const Value& v) const {
    if (v.is_str) fail("uses the string '" + v.str + "' in arithmetic");
    return v.num;
  }

  Value eval(int i, const json& doc, int combination) {
    const Node& n = nodes_[i];
    Value out;
    switch (n.op) {
      case Op::kNum:
        out.num = n.num;
        return out;
      case Op::kStr:
        out.is_str = true;
        out.str = n.text;
        return out;
      case Op::kPtr:
        return pointer_value(n, doc, combination);
      case Op::kGpus:
        out.num = cluster_gpus(doc);
        return out;
      case Op::kNot:
        out.num = number(eval(n.a, doc, combination)) == 0 ? 1 : 0;
        return out;
      case Op::kNeg:
        out.num = -number(eval(n.a, doc, combination));
        return out;
      case Op::kAnd:
        out.num =
            number(eval(n.a, doc, combination)) != 0 && number(eval(n.b, doc, combination)) != 0;
        return out;
      case Op::kOr:
        out.num =
            number(eval(n.a, doc, combination)) != 0 || number(eval(n.b, doc, combination)) != 0;
        return out;
      default:
        break;
    }
    const Value a = eval(n.a, doc, combination);
    const Value b = eval(n.b, doc, combination);
    return binary(n.op, a, b, combination);
  }

  // {/pointer}: the combination's value at the pointer (a number, boolean as 0 / 1, or string).
  Value pointer_value(const Node& n, const json& doc, int combination) const {
    Value out;
    if (!doc.contains(n.ptr)) {
      fail("uses {" + n.text + "}, which combination " + std::to_string(combination) +
           " does not set (give it a value in the base scenario)");
    }
    const json& v = doc.at(n.ptr);
    if (v.is_number()) {
      out.num = v.get<double>();
    } else if (v.is_boolean()) {
      out.num = v.get<bool>() ? 1 : 0;
    } else if (v.is_string()) {
      out.is_str = true;
      out.str = v.get<std::string>();
    } else {
      fail("uses {" + n.text + "}, which is " + type_name(v) +
           ", expected a number, boolean or string");
    }
    return out;
  }

  // Comparison and arithmetic on evaluated operands.
  Value binary(Op op, const Value& a, const Value& b, int combination) const {
    Value out;
    if (op == Op::kEq || op == Op::kNe) {
      if (a.is_str != b.is_str) fail("compares a string with a number");
      const bool eq = a.is_str ? a.str == b.str : a.num == b.num;
      out.num = (op == Op::kEq) == eq;
      return out;
    }
    const double x = number(a), y = number(b);
    switch (op) {
      case Op::kAdd:
        out.num = x + y;
        break;
      case Op::kSub:
        out.num = x - y;
        break;
      case Op::kMul:
        out.num = x * y;
        break;
      case Op::kDiv:
      case Op::kMod:
        if (y == 0) {
          fail("divides by zero in combination " + std::to_string(combination));
        }
        out.num = op == Op::kDiv ? x / y : std::fmod(x, y);
        break;
      case Op::kLt:
        out.num = x < y;
        break;
      case Op::kLe:
        out.num = x <= y;
        break;
      case Op::kGt:
        out.num = x > y;
        break;
      case Op::kGe:
        out.num = x >= y;
        break;
      default:
        FLEETSIM_ASSERT(false);
    }
    return out;
  }

  double cluster_gpus(const json& doc) {
    const json::json_pointer sys_p("/cluster/system"), count_p("/cluster/count");
    if (!doc.contains(sys_p) || !doc.at(sys_p).is_string() || !doc.contains(count_p) ||
        !doc.at(count_p).is_number())
      fail("uses cluster_gpus, which needs /cluster/system and /cluster/count");
    const std::string sys = doc.at(sys_p).get<std::string>();
    auto it = gpus_per_unit_.find(sys);
    if (it == gpus_per_unit_.end()) {
      try {
        const SystemSpec s = load_system(sys, data_dir_);
        it = gpus_per_unit_.emplace(sys, s.unit_nodes * s.node.gpus).first;
      } catch (const InputError& e) {
        fail("uses cluster_gpus, but /cluster/system '" + sys + "' does not load: " + e.message());
      }
    }
    return it->second * doc.at(count_p).get<double>();
  }

  std::string name_, text_, file_, ptr_, data_dir_;
  size_t pos_ = 0;
  std::vector<Node> nodes_;
  int root_ = -1;
  std::map<std::string, int> gpus_per_unit_;
};

}  // namespace fleetsim::sweep_filter
