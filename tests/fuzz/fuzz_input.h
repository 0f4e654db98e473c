#ifndef PLACEMENT_TESTS_FUZZ_FUZZ_INPUT_H_
#define PLACEMENT_TESTS_FUZZ_FUZZ_INPUT_H_

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/text_format.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace placement::fuzz {

// Reads a fuzz input as a message: protobuf text format (what the seed
// corpus holds, readable), else the binary wire format.
// Most mutated inputs are not valid text format: their errors are expected,
// and printing each would slow the fuzzer down.
class SilentErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int, google::protobuf::io::ColumnNumber,
                const std::string&) override {}
};

inline void NoLog(google::protobuf::LogLevel, const char*, int,
                  const std::string&) {}

template <typename Message>
bool ParseInput(const uint8_t* data, size_t size, Message* message) {
  // Invalid UTF-8 in string fields is logged by protobuf: expected here.
  static const bool silenced = (google::protobuf::SetLogHandler(&NoLog), true);
  (void)silenced;
  const std::string text(reinterpret_cast<const char*>(data), size);
  static SilentErrors errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.AllowPartialMessage(true);
  if (parser.ParseFromString(text, message)) return true;
  message->Clear();
  return message->ParseFromArray(data, static_cast<int>(size));
}

}  // namespace placement::fuzz

#endif  // PLACEMENT_TESTS_FUZZ_FUZZ_INPUT_H_
