// The trace_id ↔ TraceID bijection (trace_id.hpp) against the spec's examples
// (wire-helpers §4.1) and values the Python SDK 1.24's otel.trace_id_of / uuid_of /
// _span_id_of returned for the same strings (recorded from the live peer; the interop suite
// asks it again at run time).
#include <babelqueue/otel/trace_id.hpp>
#include <babelqueue/otel/tracing.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using babelqueue::otel::synthetic_span_id_of;
using babelqueue::otel::to_hex;
using babelqueue::otel::trace_id_of;
using babelqueue::otel::uuid_of;

struct vector_case {
  std::string trace_id;
  std::string trace_hex;  // trace_id_of, 32 hex
  std::string uuid;       // uuid_of(trace_id_of)
  std::string span_hex;   // synthetic parent span id
};

class python_vectors : public ::testing::TestWithParam<vector_case> {};

TEST_P(python_vectors, match_the_python_sdk) {
  const auto& c = GetParam();
  EXPECT_EQ(to_hex(trace_id_of(c.trace_id)), c.trace_hex);
  EXPECT_EQ(uuid_of(trace_id_of(c.trace_id)), c.uuid);
  EXPECT_EQ(to_hex(synthetic_span_id_of(c.trace_id)), c.span_hex);
}

INSTANTIATE_TEST_SUITE_P(
    table, python_vectors,
    ::testing::Values(
        // A UUID is its own 16 bytes, in any letter case and with '-' anywhere.
        vector_case{"4bf92f35-77b3-4da6-a3ce-929d0e0e4736", "4bf92f3577b34da6a3ce929d0e0e4736",
                    "4bf92f35-77b3-4da6-a3ce-929d0e0e4736", "e1591f445adb1338"},
        vector_case{"4BF92F35-77B3-4DA6-A3CE-929D0E0E4736", "4bf92f3577b34da6a3ce929d0e0e4736",
                    "4bf92f35-77b3-4da6-a3ce-929d0e0e4736", "84c97cec615036e1"},
        vector_case{"4bf92f3577b34da6a3ce929d0e0e4736", "4bf92f3577b34da6a3ce929d0e0e4736",
                    "4bf92f35-77b3-4da6-a3ce-929d0e0e4736", "35c08cae1bccd846"},
        vector_case{"4bf9-2f3577b34da6a3ce929d0e0e47-36", "4bf92f3577b34da6a3ce929d0e0e4736",
                    "4bf92f35-77b3-4da6-a3ce-929d0e0e4736", "5af79bbc2cb219bc"},
        // The nil UUID would be the invalid TraceID: hashed instead.
        vector_case{"00000000-0000-0000-0000-000000000000", "12b9377cbe7e5c94e8a70d9d23929523",
                    "12b9377c-be7e-5c94-e8a7-0d9d23929523", "e47eabb353476bde"},
        // Anything else: the first 16 bytes of SHA-256 (spec examples first).
        vector_case{"not-a-uuid", "2184a32a3bae6ad756d745ec8678ad6a",
                    "2184a32a-3bae-6ad7-56d7-45ec8678ad6a", "8649efbf89835216"},
        vector_case{"", "e3b0c44298fc1c149afbf4c8996fb924", "e3b0c442-98fc-1c14-9afb-f4c8996fb924",
                    "e22ee649de3f1d55"},
        vector_case{"ORDER-42", "8ecba4d3760868861bfb0dde1b9eca43",
                    "8ecba4d3-7608-6886-1bfb-0dde1b9eca43", "be4e45003ff969c2"},
        vector_case{"\xc3\xa9", "4a99557e4033c3539de2eb65472017ca",
                    "4a99557e-4033-c353-9de2-eb65472017ca", "a99655116e3e6dd9"},
        vector_case{"4bf92f35-77b3-4da6-a3ce-929d0e0e473", "9b44c77d0a8d49835d48fd51a4c63069",
                    "9b44c77d-0a8d-4983-5d48-fd51a4c63069", "f51acfce1665292b"},
        // Braces, a urn:uuid: prefix or a non-hex digit are not stripped: hashed.
        vector_case{"{4bf92f35-77b3-4da6-a3ce-929d0e0e4736}", "6b7d7b09858d1e15a22f83b87571001f",
                    "6b7d7b09-858d-1e15-a22f-83b87571001f", "52aec1229ce24f96"},
        vector_case{"urn:uuid:4bf92f35-77b3-4da6-a3ce-929d0e0e4736",
                    "09fcbf87af740c98bf850a9b356a34d0", "09fcbf87-af74-0c98-bf85-0a9b356a34d0",
                    "ef3b874fbf6930d0"},
        vector_case{"4bf92f35-77b3-4da6-a3ce-929d0e0e473g", "22d46d1ea01c901ad5b27d3cc8693509",
                    "22d46d1e-a01c-901a-d5b2-7d3cc8693509", "d3957c6141b99ede"}));

TEST(trace_id, uuid_of_inverts_trace_id_of_for_every_uuid) {
  const std::string u = "0af7651916cd43dd8448eb211c80319c";
  EXPECT_EQ(uuid_of(trace_id_of(u)), "0af76519-16cd-43dd-8448-eb211c80319c");
  EXPECT_EQ(trace_id_of(uuid_of(trace_id_of(u))), trace_id_of(u));
}

TEST(trace_id, never_the_invalid_all_zero_id) {
  for (const std::string s : {"", "0", "00000000000000000000000000000000", "-"}) {
    const auto id = trace_id_of(s);
    bool any = false;
    for (auto b : id) any = any || b != 0;
    EXPECT_TRUE(any) << s;
  }
}

TEST(trace_id, otel_types_agree_with_the_bytes) {
  const auto id = babelqueue::otel::otel_trace_id_of("not-a-uuid");
  EXPECT_TRUE(id.IsValid());
  EXPECT_EQ(babelqueue::otel::uuid_of(id), "2184a32a-3bae-6ad7-56d7-45ec8678ad6a");
  const auto parent = babelqueue::otel::synthetic_parent_of("not-a-uuid");
  EXPECT_TRUE(parent.IsValid());
  EXPECT_TRUE(parent.IsRemote());
  EXPECT_TRUE(parent.IsSampled());
  char span_hex[16];
  parent.span_id().ToLowerBase16(span_hex);
  EXPECT_EQ(std::string(span_hex, 16), "8649efbf89835216");
}

}  // namespace
