// SPDX-License-Identifier: Apache-2.0
// rnicctl: look at an rnic card, simulated or real, while another process (the main job) owns it.
//
//   rnicctl [--device S] [--xclbin F] [--json] <info|regs|stags|streams|queues|counters> [the same options]
//
// The options go before or after the command (`rnicctl info --json` is `rnicctl --json info`);
// --xclbin is OpenOptions::xclbin for an xrt: device (default $RNIC_XCLBIN).
// Opens the device as an observer (OpenOptions::observer): it reads registers and counters and the
// tables the owning driver publishes, and never writes to the card. Human-readable tables by
// default; --json prints the same data as one JSON document. Exit status: 0 success, 1 the device
// or the data could not be read, 2 usage error.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rnic/driver/rnic.hpp"
#include "rnic/hw/hw.hpp"
#include "rnic/wire/ddp_errors.hpp"

namespace {

using Json = nlohmann::ordered_json;

// ---- Registers: every RNIC_REG row of hw.def, write-only ones left out (they read as 0) ----------
// An RNIC_REG_ARRAY row stands for `count` registers NAME0.. at offset + 4*i.
struct RegRow {
  const char* name;
  std::uint32_t offset;
  const char* access;
  const char* desc;
  std::uint32_t count;  // 0: a single register named `name`; else NAME0..NAME<count-1>
};

#define RNIC_CONST(name, value, desc)
#define RNIC_CMD(name, opcode, desc)
#define RNIC_FIELD(rec, name, offset, bits, desc)
#define RNIC_REG(name, offset, access, desc) RegRow{#name, offset, #access, desc, 0},
#define RNIC_REG_ARRAY(name, offset, access, count, desc) RegRow{#name, offset, #access, desc, rnic::hw::k##count},
constexpr RegRow kRegs[] = {
#include "rnic/hw/hw.def"
};
#undef RNIC_REG_ARRAY
#undef RNIC_REG
#undef RNIC_FIELD
#undef RNIC_CMD
#undef RNIC_CONST

bool readable(const RegRow& r) { return std::string(r.access) != "WO"; }

// ---- Output helpers --------------------------------------------------------------------------------
std::string hex32(std::uint32_t v) { return fmt::format("{:#010x}", v); }

// Renders rows (JSON objects) as an aligned text table; columns are the union of the rows' keys in
// first-seen order.
bool hex_column(const std::string& key) {
  auto ends_with = [&key](const std::string& s) {
    return key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0;
  };
  return key == "stag" || key == "base_to" || key == "to" || key == "addr" || ends_with("_addr") || ends_with("_stag");
}

std::string cell(const std::string& key, const Json& v) {
  if (v.is_null()) return "-";
  if (key == "first_error" && v.is_object()) {  // a stream's first RFC 5041 7.2 error, e.g. "2/0x03 order qn 0 msn 3"
    std::string e = fmt::format("{}/{:#04x}", v.value("type", 0u), v.value("code", 0u));
    if (v.value("order", false)) e += fmt::format(" order qn {} msn {}", v.value("qn", 0u), v.value("msn", 0u));
    return e + fmt::format(" ssn {}", v.value("ssn", 0u));
  }
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    return hex_column(key) ? fmt::format("{:#x}", u) : fmt::format("{}", u);
  }
  if (v.is_number_integer()) return fmt::format("{}", v.get<std::int64_t>());
  return v.dump();
}

void print_table(const std::vector<Json>& rows) {
  if (rows.empty()) {
    fmt::print("(none)\n");
    return;
  }
  std::vector<std::string> cols;
  for (const auto& r : rows) {
    for (const auto& [k, v] : r.items()) {
      if (std::find(cols.begin(), cols.end(), k) == cols.end()) cols.push_back(k);
    }
  }
  std::vector<std::vector<std::string>> cells;
  std::vector<std::size_t> width(cols.size());
  for (std::size_t c = 0; c < cols.size(); ++c) width[c] = cols[c].size();
  for (const auto& r : rows) {
    std::vector<std::string> line;
    for (std::size_t c = 0; c < cols.size(); ++c) {
      line.push_back(r.contains(cols[c]) ? cell(cols[c], r.at(cols[c])) : "-");
      width[c] = std::max(width[c], line.back().size());
    }
    cells.push_back(std::move(line));
  }
  auto print_line = [&](const std::vector<std::string>& line) {
    std::string out;
    for (std::size_t c = 0; c < line.size(); ++c) {
      out += fmt::format("{:<{}}", line[c], width[c]);
      if (c + 1 < line.size()) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    fmt::print("{}\n", out);
  };
  print_line(cols);
  for (const auto& l : cells) print_line(l);
}

// ---- Published tables ------------------------------------------------------------------------------
// The owner's document is the driver's to shape; rnicctl finds every list named `key` (an array of
// objects, or an object of objects keyed by id) wherever it is, and adds the client / PD / stream it
// was found under as columns (when the row does not already carry them).
using Context = std::vector<std::pair<std::string, Json>>;

Json row_with_context(const Json& row, const Context& ctx) {
  Json out = Json::object();
  for (const auto& [name, id] : ctx) {
    if (!row.contains(name)) out[name] = id;
  }
  for (const auto& [k, v] : row.items()) out[k] = v;
  return out;
}

void collect(const Json& node, const std::string& key, Context ctx, std::vector<Json>& rows) {
  static const std::map<std::string, std::string> kScopes = {
      {"clients", "client"}, {"pds", "pd"}, {"streams", "stream"}};
  if (node.is_array()) {
    for (const auto& e : node) collect(e, key, ctx, rows);
    return;
  }
  if (!node.is_object()) return;
  for (const auto& [k, v] : node.items()) {
    if (k == key) {
      if (v.is_array()) {
        for (const auto& e : v) rows.push_back(row_with_context(e.is_object() ? e : Json{{"value", e}}, ctx));
      } else if (v.is_object()) {
        for (const auto& [id, e] : v.items()) {
          Json r = e.is_object() ? e : Json{{"value", e}};
          if (!r.contains("id")) r["id"] = id;
          rows.push_back(row_with_context(r, ctx));
        }
      }
      continue;
    }
    const auto scope = kScopes.find(k);
    if (scope == kScopes.end()) {
      collect(v, key, ctx, rows);
      continue;
    }
    // Descend into each element of a scope list with its id as context.
    auto descend = [&](const Json& e, const Json& id) {
      Context inner = ctx;
      if (!id.is_null()) inner.emplace_back(scope->second, id);
      collect(e, key, inner, rows);
    };
    if (v.is_array()) {
      for (const auto& e : v) {
        Json id = nullptr;
        if (e.is_object()) {
          if (e.contains("id"))
            id = e.at("id");
          else if (e.contains(scope->second))
            id = e.at(scope->second);
        }
        descend(e, id);
      }
    } else if (v.is_object()) {
      for (const auto& [id, e] : v.items()) descend(e, Json(id));
    }
  }
}

// ---- Commands --------------------------------------------------------------------------------------
Json info_json(rnic::Device& dev) {
  const auto& i = dev.info();
  return Json{{"device", i.device},
              {"backend", i.backend},
              {"id", i.id},
              {"version", i.version},
              {"build_id", i.build_id},
              {"data_width", i.data_width},
              {"stags", i.stags},
              {"streams", i.streams},
              {"qns", i.qns},
              {"ssn_window", i.ssn_window},
              {"max_segment_bytes", i.max_segment_bytes},
              {"net_assocs", i.net_assocs},
              {"net_max_packet", i.net_max_packet}};
}

void print_info(const Json& j) {
  const auto id = j["id"].get<std::uint32_t>();
  std::string ascii;
  for (int s = 24; s >= 0; s -= 8) {
    const auto c = static_cast<char>((id >> s) & 0xFF);
    ascii += (c >= 0x20 && c < 0x7F) ? c : '.';
  }
  const auto ver = j["version"].get<std::uint32_t>();
  fmt::print("device      {}\n", j["device"].get<std::string>());
  fmt::print("backend     {}\n", j["backend"].get<std::string>());
  fmt::print("id          {} ({}){}\n", hex32(id), ascii, id == rnic::hw::kID_VALUE ? "" : " UNEXPECTED");
  fmt::print("version     {}.{} ({})\n", rnic::hw::kVERSION_MAJOR.get(ver), rnic::hw::kVERSION_MINOR.get(ver),
             hex32(ver));
  fmt::print("build id    {}\n", hex32(j["build_id"].get<std::uint32_t>()));
  fmt::print("data width  {} bits\n", j["data_width"].get<std::uint32_t>());
  fmt::print("stags       {}\n", j["stags"].get<std::uint32_t>());
  fmt::print("streams     {}\n", j["streams"].get<std::uint32_t>());
  fmt::print("qns         {} per stream\n", j["qns"].get<std::uint32_t>());
  fmt::print("ssn window  {} segments\n", j["ssn_window"].get<std::uint32_t>());
  fmt::print("max segment {} bytes (DDP header included)\n", j["max_segment_bytes"].get<std::uint32_t>());
  if (const auto assocs = j["net_assocs"].get<std::uint32_t>(); assocs != 0) {
    fmt::print("network     {} associations, packets up to {} bytes\n", assocs,
               j["net_max_packet"].get<std::uint32_t>());
  } else {
    fmt::print("network     none (built without the network side)\n");
  }
}

Json regs_json(rnic::Device& dev) {
  Json out = Json::array();
  for (const auto& r : kRegs) {
    if (!readable(r)) continue;
    for (std::uint32_t i = 0; i < std::max<std::uint32_t>(r.count, 1); ++i) {
      const std::uint32_t offset = r.offset + 4 * i;
      out.push_back(Json{{"name", r.count == 0 ? std::string(r.name) : fmt::format("{}{}", r.name, i)},
                         {"offset", offset},
                         {"access", r.access},
                         {"value", dev.read_reg(offset)},
                         {"description", r.desc}});
    }
  }
  return out;
}

void print_regs(const Json& regs) {
  std::size_t w = 4;
  for (const auto& r : regs) w = std::max(w, r["name"].get<std::string>().size());
  fmt::print("{:<{}}  offset  acc  value       decimal\n", "name", w);
  for (const auto& r : regs) {
    const auto v = r["value"].get<std::uint32_t>();
    fmt::print("{:<{}}  {:#06x}  {:<3}  {}  {}\n", r["name"].get<std::string>(), w, r["offset"].get<std::uint32_t>(),
               r["access"].get<std::string>(), hex32(v), v);
  }
}

Json counters_json(rnic::Device& dev) {
  const rnic::Counters c = dev.counters();
  Json j{{"segments", c.segments},
         {"bytes", c.bytes},
         {"messages", c.messages},
         {"drops", c.drops},
         {"access", c.access},
         {"duplicates", c.duplicates},
         {"write_errors", c.write_errors},
         {"read_errors", c.read_errors}};
  // The owning driver's count (from its published state; null when no owner published one).
  j["unmatched_completions"] = c.unmatched_completions ? Json(*c.unmatched_completions) : Json(nullptr);
  if (c.errors.size() != rnic::wire::kAllDdpErrors.size()) {
    throw rnic::Error(rnic::Errc::kMismatch,
                      fmt::format("the driver reported {} per-error counters, ddp_errors.def has {} rows",
                                  c.errors.size(), rnic::wire::kAllDdpErrors.size()));
  }
  Json errors = Json::array();
  for (std::size_t i = 0; i < c.errors.size(); ++i) {
    const auto e = rnic::wire::kAllDdpErrors[i];
    errors.push_back(Json{{"name", rnic::wire::error_name(e)},
                          {"type", rnic::wire::error_type(e)},
                          {"code", rnic::wire::error_code(e)},
                          {"description", rnic::wire::error_description(e)},
                          {"count", c.errors[i]}});
  }
  j["errors"] = errors;
  // The network side's counters (NET_CNT0..9, 32 bits, wrapping; all 0 on a card without one).
  Json net = Json::object();
  for (const auto& r : c.net.rows()) net[r.key] = r.value;
  j["network"] = net;
  // rnic-sim's UDP port: what never reaches the card (an empty datagram) is counted only there.
  if (rnic::SimControl* sim = dev.sim()) {
    const rnic::SimNetPortStats s = sim->net_port_stats();
    j["simulator_udp_port"] = Json{{"udp_port", s.udp_port},
                                   {"datagrams_to_card", s.in},
                                   {"datagrams_sent", s.out},
                                   {"datagrams_dropped", s.dropped},
                                   {"empty_datagrams", s.empty}};
  }
  return j;
}

void print_counters(const Json& j) {
  static const char* const kNames[][2] = {{"segments", "segments received"},
                                          {"bytes", "payload bytes placed"},
                                          {"messages", "messages delivered"},
                                          {"drops", "segments dropped (stream in error / torn down)"},
                                          {"access", "access-rights failures"},
                                          {"duplicates", "duplicate segments"},
                                          {"write_errors", "host write errors (BRESP)"},
                                          {"read_errors", "descriptor read errors (RRESP)"}};
  for (const auto& n : kNames) fmt::print("{:<48} {}\n", n[1], j[n[0]].get<std::uint64_t>());
  const Json& um = j["unmatched_completions"];
  fmt::print("{:<48} {}\n", "completions the driver could not match",
             um.is_null() ? std::string("- (no owner published its state)") : std::to_string(um.get<std::uint64_t>()));
  fmt::print("network side (NET_CNT0..{}, 32 bits, wrapping):\n", rnic::hw::kNET_COUNTERS - 1);
  for (const auto& row : rnic::NetCounters{}.rows())
    fmt::print("  {:<46} {}\n", row.meaning, j["network"][row.key].get<std::uint64_t>());
  if (j.contains("simulator_udp_port")) {
    const Json& s = j["simulator_udp_port"];
    fmt::print("rnic-sim's UDP port {}:\n", s["udp_port"].get<unsigned>());
    fmt::print("  {:<46} {}\n", "datagrams handed to the card", s["datagrams_to_card"].get<std::uint64_t>());
    fmt::print("  {:<46} {}\n", "datagrams the card sent", s["datagrams_sent"].get<std::uint64_t>());
    fmt::print("  {:<46} {}\n", "datagrams dropped (queue full, socket not set)",
               s["datagrams_dropped"].get<std::uint64_t>());
    fmt::print("  {:<46} {}\n", "empty datagrams (no packet: not for the card)",
               s["empty_datagrams"].get<std::uint64_t>());
  }
  fmt::print("RFC 5041 7.2 errors:\n");
  fmt::print("  type code  {:<24} {:<44} count\n", "name", "description");
  for (const auto& e : j["errors"]) {
    fmt::print("  {:#3x}  {:#04x}  {:<24} {:<44} {}\n", e["type"].get<unsigned>(), e["code"].get<unsigned>(),
               e["name"].get<std::string>(), e["description"].get<std::string>(), e["count"].get<std::uint64_t>());
  }
}

Json table_json(rnic::Device& dev, const std::string& key) {
  const std::string doc = dev.published_state();
  Json rows = Json::array();
  if (doc.empty()) return rows;
  Json state;
  try {
    state = Json::parse(doc);
  } catch (const Json::parse_error& e) {
    throw rnic::Error(rnic::Errc::kBackend, fmt::format("the owner's published state is not JSON: {}", e.what()));
  }
  std::vector<Json> found;
  collect(state, key, {}, found);
  for (auto& r : found) rows.push_back(std::move(r));
  return rows;
}

// ---- Options -----------------------------------------------------------------------------------
struct CommonOptions {
  std::string device, xclbin;
  bool json = false;
  bool device_given = false, xclbin_given = false;
};

void add_common_options(CLI::App& app, CommonOptions& o) {
  app.add_option("--device", o.device, "sim:<socket> or xrt:<index> (default $RNIC_DEVICE, then sim:rnic-sim.sock)")
      ->each([&o](const std::string&) { o.device_given = true; });
  app.add_option("--xclbin", o.xclbin, "xrt: the xclbin to load (default $RNIC_XCLBIN)")
      ->each([&o](const std::string&) { o.xclbin_given = true; });
  app.add_flag("--json", o.json, "print JSON instead of tables");
}

// The options given before the command and after it; one given in both places must agree.
CommonOptions merge(const CommonOptions& top, const CommonOptions& cmd) {
  auto pick = [](const char* name, bool top_given, const std::string& top_value, bool cmd_given,
                 const std::string& cmd_value) {
    if (top_given && cmd_given && top_value != cmd_value)
      throw CLI::ValidationError(
          name, fmt::format("given before the command ('{}') and after it ('{}')", top_value, cmd_value));
    return cmd_given ? cmd_value : top_value;
  };
  CommonOptions out;
  out.device = pick("--device", top.device_given, top.device, cmd.device_given, cmd.device);
  out.xclbin = pick("--xclbin", top.xclbin_given, top.xclbin, cmd.xclbin_given, cmd.xclbin);
  out.json = top.json || cmd.json;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "rnicctl: identification, registers, counters and the owner's tables of an rnic card "
      "(opened as an observer: never writes to it)"};
  // --device, --xclbin and --json go before or after the command: the top level and every command
  // take them (`rnicctl --json info` is `rnicctl info --json`).
  CommonOptions top;
  add_common_options(app, top);
  app.require_subcommand(1, 1);
  const std::vector<std::pair<std::string, std::string>> cmds = {
      {"info", "identification and capabilities"},
      {"regs", "every readable register of the map (hw.def) with its value"},
      {"stags", "registered STags (the owner's published tables)"},
      {"streams",
       "streams and their state: normal, error (first RFC 5041 7.2 error), torn_down (the owner's published tables)"},
      {"queues", "untagged receive queues (the owner's published tables)"},
      {"counters", "traffic counters and one counter per RFC 5041 7.2 error"}};
  std::map<std::string, CommonOptions> per_cmd;
  for (const auto& [name, help] : cmds) add_common_options(*app.add_subcommand(name, help), per_cmd[name]);
  CommonOptions opt;
  try {
    app.parse(argc, argv);
    opt = merge(top, per_cmd.at(app.get_subcommands().front()->get_name()));
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  const std::string cmd = app.get_subcommands().front()->get_name();
  const std::string& device = opt.device;
  const bool json = opt.json;

  try {
    rnic::OpenOptions opts;
    opts.observer = true;
    opts.xclbin = opt.xclbin;  // empty: $RNIC_XCLBIN
    const auto dev = rnic::Device::open(device, opts);
    Json out;
    if (cmd == "info") {
      out = info_json(*dev);
      if (!json) print_info(out);
    } else if (cmd == "regs") {
      out = regs_json(*dev);
      if (!json) print_regs(out);
    } else if (cmd == "counters") {
      out = counters_json(*dev);
      if (!json) print_counters(out);
    } else {
      out = table_json(*dev, cmd);
      if (!json) {
        const std::string doc = dev->published_state();
        if (out.empty() && doc.empty()) {
          fmt::print("(no tables published: no driver owns the card)\n");
        } else if (out.empty() && Json::parse(doc, nullptr, false).value("truncated", false)) {
          fmt::print(
              "(the owner's tables are too large to publish whole; it published per-client "
              "counts only)\n");
        } else {
          print_table(std::vector<Json>(out.begin(), out.end()));
        }
      }
    }
    if (json) fmt::print("{}\n", out.dump(2));
    return 0;
  } catch (const rnic::Error& e) {
    fmt::print(stderr, "rnicctl: {}: {}\n", rnic::errc_name(e.code()), e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "rnicctl: {}\n", e.what());
  }
  return 1;
}
