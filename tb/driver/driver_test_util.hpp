// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the driver unit tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "fake_backend.hpp"
#include "rnic/driver/rnic.hpp"

// Expects `stmt` to throw rnic::Error with code `errc` and a message containing `text`.
#define EXPECT_ERRC(stmt, errc, text)                                                                  \
  do {                                                                                                 \
    try {                                                                                              \
      stmt;                                                                                            \
      ADD_FAILURE() << #stmt " did not throw (expected " << rnic::errc_name(errc) << ")";              \
    } catch (const rnic::Error& e_) {                                                                  \
      EXPECT_EQ(e_.code(), errc) << #stmt ": got " << rnic::errc_name(e_.code()) << ": " << e_.what(); \
      EXPECT_NE(std::string(e_.what()).find(text), std::string::npos)                                  \
          << #stmt ": message '" << e_.what() << "' does not mention '" << text << "'";                \
    }                                                                                                  \
  } while (0)

namespace rnic::test {

// A device on a fake card with one client, a PD and a 64 KiB buffer.
class Driver : public ::testing::Test {
 protected:
  void SetUp() override { reopen(opts); }
  // (Re)opens a device on a fresh fake card with options `o` (e.g. a smaller completion ring), with a
  // new client, PD and buffer.
  void reopen(const OpenOptions& o) {
    client.reset();
    dev.reset();
    fake = std::make_shared<FakeState>();
    configure(*fake);
    opts = o;
    dev = open_fake(fake, opts);
    client = dev->create_client(limits);
    pd = client->alloc_pd();
    buf = client->alloc_buffer(64 * 1024);
  }
  virtual void configure(FakeState&) {}

  // A stream on `pd` with queue 0 configured to 2^log2 entries.
  StreamId stream_with_queue(std::uint32_t log2 = 3, std::uint32_t qn = 0) {
    const StreamId s = client->create_stream(pd);
    client->configure_queue(s, qn, log2);
    return s;
  }

  std::shared_ptr<FakeState> fake;
  OpenOptions opts;
  Limits limits;
  std::unique_ptr<Device> dev;
  std::unique_ptr<Client> client;
  PdId pd = 0;
  Buffer buf;
};

}  // namespace rnic::test
