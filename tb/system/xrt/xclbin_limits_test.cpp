// SPDX-License-Identifier: Apache-2.0
// inspect_xclbin's bounds on what reaches XRT's parsers: how much of the file is read (the header's
// length claim, never the file's size) and how deep its XML / JSON metadata may nest (XRT's parsers
// recurse once per level: 100,000 levels overflowed the stack, exit 139). Each hostile file is judged
// in a child process, so a crash or a huge allocation fails the test instead of ending the run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xrt/xclbin.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "rnic/driver/rnic.hpp"
#include "test_xclbin.hpp"
#include "xrt_xclbin.hpp"

namespace {

using rnic::Errc;
using rnic::Error;
using rnic::detail::inspect_xclbin;
using rnic::detail::kXclbinMaxBytes;
using rnic::detail::kXclbinMaxMetadataDepth;
using rnic::detail::kXclbinMaxTrailingBytes;
using rnic::tb::build_xclbin;
using rnic::tb::rnic_test_xclbin;
using rnic::tb::TestXclbin;

// What inspect_xclbin did in a child process.
struct ChildOutcome {
  int wait_status = 0;      // waitpid's status: the child must exit 0 (not die by a signal)
  bool returned = false;    // the child got an answer back (a description or an error)
  bool threw = false;       // ... an rnic::Error
  int code = -1;            // its Errc
  std::string message;      // its what()
  long rss_growth_kb = -1;  // ru_maxrss after minus before, in the child
};

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0)
      out.append(buf, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  return out;
}

ChildOutcome inspect_in_child(const std::string& path) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    rusage before{};
    ::getrusage(RUSAGE_SELF, &before);
    std::string line;
    try {
      inspect_xclbin(path);
      line = "ok\n-1\n";
    } catch (const Error& e) {
      line = "error\n" + std::to_string(static_cast<int>(e.code())) + "\n" + e.what();
    } catch (const std::exception& e) {
      line = std::string("exception\n-1\n") + e.what();
    }
    rusage after{};
    ::getrusage(RUSAGE_SELF, &after);
    line = std::to_string(after.ru_maxrss - before.ru_maxrss) + "\n" + line;
    const char* p = line.data();
    std::size_t left = line.size();
    while (left > 0) {
      const ssize_t n = ::write(fds[1], p, left);
      if (n <= 0) ::_exit(3);
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  const std::string text = read_all(fds[0]);
  ::close(fds[0]);
  ChildOutcome out;
  while (::waitpid(pid, &out.wait_status, 0) < 0 && errno == EINTR) {
  }
  // "<rss growth>\n<ok|error|exception>\n<code>\n<message>"
  std::size_t a = text.find('\n');
  std::size_t b = a == std::string::npos ? a : text.find('\n', a + 1);
  std::size_t c = b == std::string::npos ? b : text.find('\n', b + 1);
  if (c == std::string::npos) return out;
  out.returned = true;
  out.rss_growth_kb = std::stol(text.substr(0, a));
  const std::string kind = text.substr(a + 1, b - a - 1);
  out.threw = kind == "error";
  out.code = std::stoi(text.substr(b + 1, c - b - 1));
  out.message = kind == "exception" ? "not an rnic::Error: " + text.substr(c + 1) : text.substr(c + 1);
  return out;
}

// The child exited normally and inspect_xclbin threw kNoDevice with every part in its message.
void expect_refused(const ChildOutcome& o, const std::vector<std::string>& parts) {
  ASSERT_TRUE(WIFEXITED(o.wait_status)) << "inspect_xclbin did not return: the child died by signal "
                                        << (WIFSIGNALED(o.wait_status) ? WTERMSIG(o.wait_status) : 0)
                                        << " (exit status "
                                        << (WIFSIGNALED(o.wait_status) ? 128 + WTERMSIG(o.wait_status) : -1) << ")";
  ASSERT_EQ(WEXITSTATUS(o.wait_status), 0);
  ASSERT_TRUE(o.returned);
  ASSERT_TRUE(o.threw) << "accepted (or another exception): " << o.message;
  EXPECT_EQ(o.code, static_cast<int>(Errc::kNoDevice)) << o.message;
  for (const auto& part : parts)
    EXPECT_NE(o.message.find(part), std::string::npos) << "'" << part << "' not in: " << o.message;
}

// `levels` nested elements inside the rnic kernel.xml's <project> (beside <platform>, which XRT reads).
std::string xml_nested(int levels) {
  std::string deep;
  deep.reserve(static_cast<std::size_t>(levels) * 9);
  for (int i = 0; i < levels; ++i) deep += "<n a=\"1\">";
  for (int i = 0; i < levels; ++i) deep += "</n>";
  std::string xml = rnic::tb::rnic_metadata_xml();
  const std::string open = "<project name=\"rnic\">";
  xml.insert(xml.find(open) + open.size(), deep);
  return xml;
}

// A BUILD_METADATA JSON document nesting `levels` deep (arrays and objects alternating).
std::string json_nested(int levels) {
  std::string s;
  for (int i = 0; i < levels; ++i) s += i % 2 == 0 ? "{\"k\":" : "[";
  s += "\"x\"";
  for (int i = levels - 1; i >= 0; --i) s += i % 2 == 0 ? "}" : "]";
  return s;
}

class XclbinLimits : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = rnic::tb::make_test_dir(); }
  void TearDown() override { rnic::tb::remove_test_dir(dir_); }
  std::string write(const std::string& name, const std::vector<char>& bytes) {
    return rnic::tb::write_test_file(dir_, name, bytes);
  }
  static void set_length(std::vector<char>& bytes, std::uint64_t length) {
    std::memcpy(bytes.data() + offsetof(axlf, m_header) + offsetof(axlf_header, m_length), &length, sizeof length);
  }
  std::string dir_;
};

// The crash this bound exists for: 100,000 levels of XML in EMBEDDED_METADATA.
TEST_F(XclbinLimits, DeepXmlMetadataIsRefusedBeforeXrtParsesIt) {
  auto spec = rnic_test_xclbin();
  spec.metadata_xml = xml_nested(100000);
  const std::string path = write("deepxml.xclbin", build_xclbin(spec));
  expect_refused(inspect_in_child(path),
                 {path, "EMBEDDED_METADATA", "XML", "deeper than " + std::to_string(kXclbinMaxMetadataDepth)});
}

// The bound is exact and leaves room for real kernel.xml files (about 8 levels deep).
TEST_F(XclbinLimits, XmlNestingUpToTheBoundIsAccepted) {
  static_assert(kXclbinMaxMetadataDepth >= 32, "real kernel.xml files must fit");
  // <project> itself is level 1, the inserted chain starts at level 2.
  auto spec = rnic_test_xclbin();
  spec.metadata_xml = xml_nested(kXclbinMaxMetadataDepth - 1);
  const auto info = inspect_xclbin(write("at.xclbin", build_xclbin(spec)));
  EXPECT_EQ(info.gmem.tag, "HOST[0]");

  spec.metadata_xml = xml_nested(kXclbinMaxMetadataDepth);
  const std::string path = write("over.xclbin", build_xclbin(spec));
  expect_refused(inspect_in_child(path), {path, "EMBEDDED_METADATA", "deeper than"});
}

// Comments, CDATA, processing instructions, self-closing tags and '>' inside attribute values do not
// count as levels.
TEST_F(XclbinLimits, XmlNestingCountsElementsOnly) {
  auto spec = rnic_test_xclbin();
  std::string noise;
  for (int i = 0; i < 500; ++i) noise += "<e v=\"a>b\"/><!-- <x><x> --><![CDATA[<y><y>]]><?pi <z>?>";
  spec.metadata_xml = rnic::tb::rnic_metadata_xml();
  const std::string open = "<project name=\"rnic\">";
  spec.metadata_xml.insert(spec.metadata_xml.find(open) + open.size(), noise);
  const auto info = inspect_xclbin(write("noise.xclbin", build_xclbin(spec)));
  EXPECT_EQ(info.ip_name, "rnic_kernel:rnic_kernel_1");
}

TEST_F(XclbinLimits, DeepJsonMetadataIsRefused) {
  auto spec = rnic_test_xclbin();
  spec.extra_sections = {{BUILD_METADATA, json_nested(100000)}};
  const std::string path = write("deepjson.xclbin", build_xclbin(spec));
  expect_refused(inspect_in_child(path), {path, "BUILD_METADATA", "JSON", "deeper than"});

  // Brackets inside strings are text; a shallow document passes.
  spec.extra_sections = {{BUILD_METADATA, "{\"a\": \"[[[[{{{{\\\"[[[\", \"b\": [1, {\"c\": 2}]}"}};
  EXPECT_NO_THROW(inspect_xclbin(write("json.xclbin", build_xclbin(spec))));
}

// A 1 GiB sparse file whose header claims a couple of KB: the claim is what is read (and such a
// file is refused), never the file's size: RSS stays small.
TEST_F(XclbinLimits, SparseGigabyteFileIsNotReadWhole) {
  const auto bytes = build_xclbin(rnic_test_xclbin());
  const std::string path = write("sparse.xclbin", bytes);
  ASSERT_EQ(::truncate(path.c_str(), off_t{1} << 30), 0) << std::strerror(errno);
  const ChildOutcome o = inspect_in_child(path);
  expect_refused(o, {path, "1073741824 bytes", "header says " + std::to_string(bytes.size())});
  EXPECT_GE(o.rss_growth_kb, 0);
  EXPECT_LT(o.rss_growth_kb, 64 * 1024) << "inspect_xclbin grew its RSS by " << o.rss_growth_kb << " KiB";
}

// Bytes after the claimed length (an xclbin signature is appended there) are allowed up to a bound
// and never handed to XRT.
TEST_F(XclbinLimits, TrailingBytesAfterTheClaimedLength) {
  auto bytes = build_xclbin(rnic_test_xclbin());
  bytes.resize(bytes.size() + 4096, '\x5a');
  EXPECT_EQ(inspect_xclbin(write("signed.xclbin", bytes)).gmem.tag, "HOST[0]");

  bytes = build_xclbin(rnic_test_xclbin());
  const std::size_t claim = bytes.size();
  bytes.resize(claim + kXclbinMaxTrailingBytes + 1);
  const std::string path = write("tail.xclbin", bytes);
  expect_refused(inspect_in_child(path),
                 {path, std::to_string(bytes.size()) + " bytes", "header says " + std::to_string(claim)});
}

TEST_F(XclbinLimits, ClaimAboveTheMaximumIsRefused) {
  auto bytes = build_xclbin(rnic_test_xclbin());
  set_length(bytes, kXclbinMaxBytes + 1);
  const std::string path = write("huge.xclbin", bytes);
  expect_refused(inspect_in_child(path), {path, std::to_string(kXclbinMaxBytes + 1), "larger than"});
}

TEST_F(XclbinLimits, ClaimShorterThanTheHeaderIsRefused) {
  auto bytes = build_xclbin(rnic_test_xclbin());
  set_length(bytes, 16);
  const std::string path = write("tiny.xclbin", bytes);
  expect_refused(inspect_in_child(path), {path, "header says 16 bytes", "axlf header"});
}

}  // namespace
