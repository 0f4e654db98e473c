// common/read_file: the whole content, bytes as they are; NOT_FOUND naming
// the path when the file cannot be opened.
#include "common/read_file.h"

#include <cstdio>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::common {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/read_file_test_" + name;
}

TEST(ReadFileTest, ReturnsTheWholeContentBytesAsTheyAre) {
  const std::string path = TempPath("content");
  constexpr char kBytes[] = "line one\r\nline two\0\xff tail";
  const std::string content(kBytes, sizeof(kBytes) - 1);
  {
    std::ofstream out(path, std::ios::binary);
    out << content;
  }
  absl::StatusOr<std::string> read = ReadFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, content);
  std::remove(path.c_str());
}

TEST(ReadFileTest, AnEmptyFileIsEmptyContent) {
  const std::string path = TempPath("empty");
  { std::ofstream out(path); }
  absl::StatusOr<std::string> read = ReadFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "");
  std::remove(path.c_str());
}

TEST(ReadFileTest, AMissingFileIsNotFoundNamingThePath) {
  const std::string path = TempPath("does_not_exist");
  std::remove(path.c_str());
  absl::StatusOr<std::string> read = ReadFile(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(read.status().message(), ::testing::HasSubstr(path));
}

}  // namespace
}  // namespace placement::common
