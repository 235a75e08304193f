// SPDX-License-Identifier: Apache-2.0
// rnic-gen-structs-svh: writes rtl/rnic_structs.svh (the packed types rnic_kernel's stages hand each
// other) from hw/include/rnic/hw/structs.def, the single source the testbenches' C++ packing
// is expanded from too.
// Usage: rnic-gen-structs-svh [output-file]   (stdout without an argument)
// Exits 1 when the output cannot be written, 2 when a row of structs.def breaks a rule (named on stderr).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "gen_output.hpp"

namespace {

struct Value {
  std::string name, desc;
  unsigned long long value;
};
struct Enum {
  std::string type, desc;
  unsigned bits;
  bool typed;
  std::vector<Value> values;
};
struct Member {
  std::string field, desc;
  unsigned bits;     // logic [bits-1:0]; 0 for a typed member
  std::string type;  // enum or struct type, empty for logic
};
struct Struct {
  std::string type, desc;
  std::vector<Member> members;
};
// One entry of the file in order: an enum or a struct.
struct Item {
  bool is_enum;
  std::size_t index;
};

struct Model {
  std::vector<Enum> enums;
  std::vector<Struct> structs;
  std::vector<Item> order;
};

Model read_def() {
  Model m;
#define RNIC_ENUM(type, cpp, bits, typed, desc)                 \
  m.enums.push_back(Enum{#type, desc, bits, (typed) != 0, {}}); \
  m.order.push_back(Item{true, m.enums.size() - 1});
#define RNIC_ENUM_VALUE(type, name, cpp, value, desc) m.enums.back().values.push_back(Value{#name, desc, value});
#define RNIC_STRUCT(type, cpp, desc)            \
  m.structs.push_back(Struct{#type, desc, {}}); \
  m.order.push_back(Item{false, m.structs.size() - 1});
#define RNIC_MEMBER(type, field, bits, desc) m.structs.back().members.push_back(Member{#field, desc, bits, ""});
#define RNIC_MEMBER_T(type, field, member_type, desc) \
  m.structs.back().members.push_back(Member{#field, desc, 0, #member_type});
#include "rnic/hw/structs.def"
  return m;
}

// The rules the RTL and the C++ expansion rely on; the first broken one, or empty.
std::string check(const Model& m) {
  std::vector<std::string> types;  // typed enums and structs defined so far
  auto defined = [&](const std::string& t) {
    for (const auto& x : types)
      if (x == t) return true;
    return false;
  };
  for (const Item& it : m.order) {
    if (it.is_enum) {
      const Enum& e = m.enums[it.index];
      if (e.bits < 1 || e.bits > 32) return e.type + ": width " + std::to_string(e.bits) + " not in 1..32";
      if (e.values.empty()) return e.type + ": no values";
      for (std::size_t i = 0; i < e.values.size(); ++i) {
        if (e.values[i].value >> e.bits != 0)
          return e.type + "::" + e.values[i].name + ": value " + std::to_string(e.values[i].value) +
                 " does not fit in " + std::to_string(e.bits) + " bits";
        for (std::size_t j = 0; j < i; ++j)
          if (e.values[j].value == e.values[i].value || e.values[j].name == e.values[i].name)
            return e.type + "::" + e.values[i].name + ": duplicates " + e.values[j].name;
      }
      if (defined(e.type)) return e.type + ": defined twice";
      if (e.typed) types.push_back(e.type);
    } else {
      const Struct& s = m.structs[it.index];
      if (s.members.empty()) return s.type + ": no members";
      for (std::size_t i = 0; i < s.members.size(); ++i) {
        const Member& f = s.members[i];
        const std::string where = s.type + "." + f.field;
        if (f.type.empty()) {
          if (f.bits < 1) return where + ": width 0";
          if (f.bits > 64 && f.bits % 8 != 0)
            return where + ": a member wider than 64 bits must be whole bytes (C++ holds it as bytes), not " +
                   std::to_string(f.bits);
        } else if (!defined(f.type)) {
          return where + ": type " + f.type + " is not a typed enum or struct defined above it";
        }
        for (std::size_t j = 0; j < i; ++j)
          if (s.members[j].field == f.field) return where + ": member defined twice";
      }
      if (defined(s.type)) return s.type + ": defined twice";
      types.push_back(s.type);
    }
  }
  return {};
}

std::string pad(const std::string& s, std::size_t w) { return s.size() >= w ? s : s + std::string(w - s.size(), ' '); }

std::string logic(unsigned bits) { return bits == 1 ? "logic" : "logic [" + std::to_string(bits - 1) + ":0]"; }

std::string comment(const std::string& desc) { return desc.empty() ? "" : "  // " + desc; }

void emit_enum(std::ostream& o, const Enum& e) {
  o << "\n// " << e.desc << "\n";
  std::size_t w = 0;
  for (const auto& v : e.values) w = std::max(w, v.name.size());
  const std::string lit = std::to_string(e.bits) + "'d";
  if (!e.typed) {
    o << "/* verilator lint_off UNUSEDPARAM */  // a table of names: each module uses only some\n";
    for (const auto& v : e.values)
      o << "localparam " << logic(e.bits) << " " << pad(v.name, w) << " = " << lit << v.value << ";" << comment(v.desc)
        << "\n";
    o << "/* verilator lint_on UNUSEDPARAM */\n";
    return;
  }
  o << "typedef enum " << logic(e.bits) << " {\n";
  for (std::size_t i = 0; i < e.values.size(); ++i) {
    const auto& v = e.values[i];
    const bool last = i + 1 == e.values.size();
    o << "  " << pad(v.name, w) << " = " << lit << v.value << (last ? "" : ",")
      << (v.desc.empty() ? "" : (last ? "   // " : "  // ") + v.desc) << "\n";
  }
  o << "} " << e.type << ";\n";
}

void emit_struct(std::ostream& o, const Struct& s) {
  o << "\n// " << s.desc << "\n";
  std::size_t tw = 0, fw = 0;
  for (const auto& f : s.members) {
    tw = std::max(tw, (f.type.empty() ? logic(f.bits) : f.type).size());
    fw = std::max(fw, f.field.size() + 1);
  }
  o << "typedef struct packed {\n";
  for (const auto& f : s.members) {
    const std::string decl = "  " + pad(f.type.empty() ? logic(f.bits) : f.type, tw) + " " + f.field + ";";
    o << (f.desc.empty() ? decl : pad(decl, tw + fw + 3) + comment(f.desc)) << "\n";
  }
  o << "} " << s.type << ";\n";
}

}  // namespace

int main(int argc, char** argv) {
  const Model m = read_def();
  if (const std::string bad = check(m); !bad.empty()) {
    std::cerr << "rnic-gen-structs-svh: structs.def: " << bad << "\n";
    return 2;
  }
  std::ostringstream o;
  o << "// SPDX-License-Identifier: Apache-2.0\n"
       "// GENERATED by rnic-gen-structs-svh from hw/include/rnic/hw/structs.def. Do not edit: change\n"
       "// the .def and regenerate (cmake --build --preset default --target rnic-gen-structs-svh-update). A unit\n"
       "// test checks it matches. The packed types the stages of rnic_kernel hand each other; a packed struct\n"
       "// is one vector, its first member most significant (the testbenches pack the same rows in C++).\n"
       "// $unit scope, include-guarded; included by rnic_defs.svh. Never put these in memories or packed\n"
       "// arrays (Yosys 0.23 miscompiles those): store tables as flat vectors.\n"
       "`ifndef RNIC_STRUCTS_SVH\n`define RNIC_STRUCTS_SVH\n";
  for (const Item& it : m.order) {
    if (it.is_enum) {
      emit_enum(o, m.enums[it.index]);
    } else {
      emit_struct(o, m.structs[it.index]);
    }
  }
  o << "\n`endif  // RNIC_STRUCTS_SVH\n";

  return rnic::hw::write_generated(argc, argv, o.str());
}
