// SPDX-License-Identifier: Apache-2.0
// RFC 5041 7.2 "DDP Error Numbers". The expected table below is transcribed by hand from the RFC
// text (not generated from ddp_errors.def), so a typo in the .def is caught here.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <set>
#include <string>

#include "rnic/wire/ddp_errors.hpp"
#include "test_util.hpp"

namespace rnic::wire {
namespace {

struct ExpectedRow {
  DdpError e;
  const char* name;  // project name (ddp_errors.hpp enumerator without the k)
  unsigned type;     // 4-bit Error Type
  unsigned code;     // 8-bit Error Code
  const char* description;
};

// RFC 5041 7.2, in RFC order:
//   0x0 0x00 Local Catastrophic
//   0x1      Tagged Buffer Error: 0x00..0x04
//   0x2      Untagged Buffer Error: 0x01..0x06
//   0x3 Rsvd Reserved for the use by the LLP (project code 0x00)
const ExpectedRow kRfcTable[] = {
    {DdpError::kLocalCatastrophic, "LocalCatastrophic", 0x0, 0x00, "Local Catastrophic"},
    {DdpError::kTaggedInvalidStag, "TaggedInvalidStag", 0x1, 0x00, "Invalid STag"},
    {DdpError::kTaggedBaseBounds, "TaggedBaseBounds", 0x1, 0x01, "Base or bounds violation"},
    {DdpError::kTaggedStagNotAssociated, "TaggedStagNotAssociated", 0x1, 0x02, "STag not associated with DDP Stream"},
    {DdpError::kTaggedToWrap, "TaggedToWrap", 0x1, 0x03, "TO wrap"},
    {DdpError::kTaggedInvalidVersion, "TaggedInvalidVersion", 0x1, 0x04, "Invalid DDP version"},
    {DdpError::kUntaggedInvalidQn, "UntaggedInvalidQn", 0x2, 0x01, "Invalid QN"},
    {DdpError::kUntaggedNoBuffer, "UntaggedNoBuffer", 0x2, 0x02, "Invalid MSN - no buffer available"},
    {DdpError::kUntaggedMsnRange, "UntaggedMsnRange", 0x2, 0x03, "Invalid MSN - MSN range is not valid"},
    {DdpError::kUntaggedInvalidMo, "UntaggedInvalidMo", 0x2, 0x04, "Invalid MO"},
    {DdpError::kUntaggedMessageTooLong, "UntaggedMessageTooLong", 0x2, 0x05,
     "DDP Message too long for available buffer"},
    {DdpError::kUntaggedInvalidVersion, "UntaggedInvalidVersion", 0x2, 0x06, "Invalid DDP version"},
    {DdpError::kLlpError, "LlpError", 0x3, 0x00, "Reserved for the use by the LLP"},
};
constexpr std::size_t kRfcRows = sizeof(kRfcTable) / sizeof(kRfcTable[0]);

// RFC 5041 7.2: each row's Error Type / Error Code, name and description.
TEST(Rfc5041ErrorNumbers, Sec7_2_EveryRowTypeCodeNameDescription) {
  for (const auto& row : kRfcTable) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(error_type(row.e), row.type);
    EXPECT_EQ(error_code(row.e), row.code);
    EXPECT_EQ(static_cast<unsigned>(row.e), (row.type << 8) | row.code) << "value = (type << 8) | code";
    EXPECT_STREQ(error_name(row.e), row.name);
    EXPECT_STREQ(error_description(row.e), row.description);
    EXPECT_LE(error_type(row.e), 0xFu) << "Error Type is 4 bits";
  }
}

// RFC 5041 7.2: kAllDdpErrors lists exactly the 13 rows, in RFC order, all distinct.
TEST(Rfc5041ErrorNumbers, Sec7_2_AllErrorsHas13DistinctRowsInRfcOrder) {
  ASSERT_EQ(kAllDdpErrors.size(), 13u);
  ASSERT_EQ(kRfcRows, 13u);
  std::set<std::uint16_t> seen;
  for (std::size_t i = 0; i < kAllDdpErrors.size(); ++i) {
    EXPECT_EQ(kAllDdpErrors[i], kRfcTable[i].e) << "row " << i;
    seen.insert(static_cast<std::uint16_t>(kAllDdpErrors[i]));
  }
  EXPECT_EQ(seen.size(), 13u);
}

// RFC 5041 7.2: the error-type headings.
TEST(Rfc5041ErrorNumbers, Sec7_2_ErrorTypeNames) {
  EXPECT_STREQ(error_type_name(0x0), "Local Catastrophic");
  EXPECT_STREQ(error_type_name(0x1), "Tagged Buffer Error");
  EXPECT_STREQ(error_type_name(0x2), "Untagged Buffer Error");
  EXPECT_STREQ(error_type_name(0x3), "LLP");
  for (unsigned t = 4; t < 256; ++t) {
    EXPECT_STREQ(error_type_name(static_cast<std::uint8_t>(t)), "?") << "type " << t;
  }
}

// RFC 5041 7.2: (type, code) -> error for every row, and back.
TEST(Rfc5041ErrorNumbers, Sec7_2_DdpErrorFromRoundTrip) {
  for (const auto& row : kRfcTable) {
    const auto e = ddp_error_from(static_cast<std::uint8_t>(row.type), static_cast<std::uint8_t>(row.code));
    ASSERT_TRUE(e.has_value()) << row.name;
    EXPECT_EQ(*e, row.e);
    EXPECT_EQ(ddp_error_from(error_type(row.e), error_code(row.e)), row.e);
  }
}

// RFC 5041 7.2: pairs absent from the table give nullopt.
TEST(Rfc5041ErrorNumbers, Sec7_2_PairsNotInTableAreNullopt) {
  EXPECT_EQ(ddp_error_from(0x1, 0x05), std::nullopt);  // tagged codes stop at 0x04
  EXPECT_EQ(ddp_error_from(0x2, 0x00), std::nullopt);  // untagged codes start at 0x01
  EXPECT_EQ(ddp_error_from(0x2, 0x07), std::nullopt);
  EXPECT_EQ(ddp_error_from(0x0, 0x01), std::nullopt);
  EXPECT_EQ(ddp_error_from(0x4, 0x00), std::nullopt);  // no type 4
  EXPECT_EQ(ddp_error_from(0xF, 0x00), std::nullopt);
  EXPECT_EQ(ddp_error_from(0xFF, 0xFF), std::nullopt);
}

// RFC 5041 7.2: exhaustive: ddp_error_from answers for exactly the 13 pairs of the table.
TEST(Rfc5041ErrorNumbers, Sec7_2_ExhaustiveLookup) {
  int found = 0;
  for (unsigned t = 0; t < 256; ++t) {
    for (unsigned c = 0; c < 256; ++c) {
      const auto e = ddp_error_from(static_cast<std::uint8_t>(t), static_cast<std::uint8_t>(c));
      const ExpectedRow* want = nullptr;
      for (const auto& row : kRfcTable) {
        if (row.type == t && row.code == c) want = &row;
      }
      if (want == nullptr) {
        ASSERT_EQ(e, std::nullopt) << "type " << t << " code " << c;
      } else {
        ASSERT_EQ(e, want->e) << "type " << t << " code " << c;
        ++found;
      }
    }
  }
  EXPECT_EQ(found, 13);
}

// Values outside the table have no name or description.
TEST(Rfc5041ErrorNumbers, Sec7_2_OutOfTableValuesPrintQuestionMark) {
  for (std::uint16_t v : {std::uint16_t{0x0105}, std::uint16_t{0x0200}, std::uint16_t{0x0400}, std::uint16_t{0xFFFF}}) {
    EXPECT_STREQ(error_name(static_cast<DdpError>(v)), "?") << v;
    EXPECT_STREQ(error_description(static_cast<DdpError>(v)), "?") << v;
  }
}

// Every wire-library error code has a distinct, non-placeholder name.
TEST(WireErrc, NamesAreDistinct) {
  const Errc all[] = {Errc::kTruncated,
                      Errc::kFieldOutOfRange,
                      Errc::kMessageTooLong,
                      Errc::kMulpduTooSmall,
                      Errc::kTaggedOffsetWrap,
                      Errc::kPrivateDataTooLong,
                      Errc::kPrivateDataOnTerminate,
                      Errc::kUnknownFunctionCode,
                      Errc::kBadParameter,
                      Errc::kFraming,
                      Errc::kFragmented,
                      Errc::kStrayGatherFlag};
  std::set<std::string> names;
  for (Errc e : all) {
    const std::string n = errc_name(e);
    EXPECT_NE(n, "unknown error");
    EXPECT_FALSE(n.empty());
    names.insert(n);
  }
  EXPECT_EQ(names.size(), sizeof(all) / sizeof(all[0]));
  EXPECT_STREQ(errc_name(static_cast<Errc>(0)), "unknown error");
  const Error err = make_error(Errc::kTruncated, "detail");
  EXPECT_EQ(err.message(), std::string(errc_name(Errc::kTruncated)) + ": detail");
}

// Result<T>: value() on an error and error() on a value throw std::logic_error.
TEST(WireResult, MisuseThrowsLogicError) {
  Result<int> bad = make_error(Errc::kTruncated, "x");
  EXPECT_FALSE(bad.ok());
  EXPECT_FALSE(static_cast<bool>(bad));
  EXPECT_THROW((void)bad.value(), std::logic_error);
  Result<int> good = 5;
  EXPECT_TRUE(good.ok());
  EXPECT_EQ(*good, 5);
  EXPECT_THROW((void)good.error(), std::logic_error);
}

}  // namespace
}  // namespace rnic::wire
