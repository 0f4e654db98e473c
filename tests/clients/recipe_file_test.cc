// Which files `placectl plan --recipe` (and the Slurm plugin through it)
// reads: regular files only, under $PLACEMENT_RECIPE_ROOTS when set, up to
// $PLACEMENT_RECIPE_MAX_BYTES.
#include "clients/placectl/recipe_file.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement::placectl {
namespace {

using ::testing::HasSubstr;

constexpr char kRecipe[] = R"(recipe:
  model: Llama-3.1-8B
  method: lora
  lora_rank: 16
total_steps: 100
)";

class RecipeFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/placement-recipe-XXXXXX";
    dir_ = mkdtemp(dir);
    mkdir((dir_ + "/recipes").c_str(), 0755);
    mkdir((dir_ + "/elsewhere").c_str(), 0755);
    unsetenv("PLACEMENT_RECIPE_ROOTS");
    unsetenv("PLACEMENT_RECIPE_MAX_BYTES");
  }
  void TearDown() override {
    unsetenv("PLACEMENT_RECIPE_ROOTS");
    unsetenv("PLACEMENT_RECIPE_MAX_BYTES");
    std::string command = absl::StrCat("rm -rf '", dir_, "'");
    EXPECT_EQ(system(command.c_str()), 0);
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = absl::StrCat(dir_, "/", name);
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(RecipeFileTest, ReadsARegularFileUnderTheRoots) {
  const std::string path = Write("recipes/lora.yaml", kRecipe);
  setenv("PLACEMENT_RECIPE_ROOTS", absl::StrCat(dir_, "/recipes").c_str(), 1);
  absl::StatusOr<v1::PlacePlanRequest> request = ReadPlanRequestFile(path);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->recipe().lora_rank(), 16);
  EXPECT_EQ(request->total_steps(), 100);
}

TEST_F(RecipeFileTest, RefusesADevice) {
  absl::StatusOr<v1::PlacePlanRequest> request =
      ReadPlanRequestFile("/dev/zero");
  EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(request.status().message(), HasSubstr("not a regular file"));
}

TEST_F(RecipeFileTest, RefusesAFileOutsideTheRoots) {
  const std::string outside = Write("elsewhere/lora.yaml", kRecipe);
  setenv("PLACEMENT_RECIPE_ROOTS", absl::StrCat(dir_, "/recipes").c_str(), 1);
  absl::StatusOr<v1::PlacePlanRequest> request = ReadPlanRequestFile(outside);
  EXPECT_EQ(request.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(request.status().message(), HasSubstr("outside the recipe"));
  // Nor through "..", nor through a symlink inside the root.
  request = ReadPlanRequestFile(
      absl::StrCat(dir_, "/recipes/../elsewhere/lora.yaml"));
  EXPECT_EQ(request.status().code(), absl::StatusCode::kPermissionDenied);
  const std::string link = absl::StrCat(dir_, "/recipes/link.yaml");
  ASSERT_EQ(symlink(outside.c_str(), link.c_str()), 0);
  request = ReadPlanRequestFile(link);
  EXPECT_EQ(request.status().code(), absl::StatusCode::kPermissionDenied);
  // A root named with a trailing slash, or a sibling sharing its prefix.
  mkdir(absl::StrCat(dir_, "/recipes-other").c_str(), 0755);
  const std::string sibling = Write("recipes-other/lora.yaml", kRecipe);
  request = ReadPlanRequestFile(sibling);
  EXPECT_EQ(request.status().code(), absl::StatusCode::kPermissionDenied);
  setenv("PLACEMENT_RECIPE_ROOTS",
         absl::StrCat("/nonexistent:", dir_, "/recipes/").c_str(), 1);
  EXPECT_TRUE(ReadPlanRequestFile(Write("recipes/lora.yaml", kRecipe)).ok());
}

// Outside the roots nothing is opened: a device is refused for where it
// is, not for what opening it showed, and a missing file is not told
// apart from one that exists (slurmctld must not probe paths for a
// submitter).
TEST_F(RecipeFileTest, ChecksTheRootsBeforeOpening) {
  setenv("PLACEMENT_RECIPE_ROOTS", absl::StrCat(dir_, "/recipes").c_str(), 1);
  absl::StatusOr<v1::PlacePlanRequest> request =
      ReadPlanRequestFile("/dev/zero");
  EXPECT_EQ(request.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(request.status().message(), HasSubstr("outside the recipe"));
  request = ReadPlanRequestFile(absl::StrCat(dir_, "/elsewhere/missing.yaml"));
  EXPECT_EQ(request.status().code(), absl::StatusCode::kPermissionDenied);
  request = ReadPlanRequestFile("/nonexistent/folder/missing.yaml");
  EXPECT_EQ(request.status().code(), absl::StatusCode::kPermissionDenied);
  // A FIFO outside the roots is not opened (opening it for reading would
  // wake a writer waiting on it).
  const std::string fifo = absl::StrCat(dir_, "/elsewhere/fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_EQ(ReadPlanRequestFile(fifo).status().code(),
            absl::StatusCode::kPermissionDenied);
  // Under the roots, a missing file is reported as missing.
  EXPECT_EQ(ReadPlanRequestFile(absl::StrCat(dir_, "/recipes/missing.yaml"))
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

TEST_F(RecipeFileTest, RefusesAFileOverTheCap) {
  // Valid YAML: a recipe and a long comment.
  const std::string path =
      Write("recipes/big.yaml",
            absl::StrCat(kRecipe, "# ", std::string(5000, 'x'), "\n"));
  setenv("PLACEMENT_RECIPE_MAX_BYTES", "4096", 1);
  absl::StatusOr<v1::PlacePlanRequest> request = ReadPlanRequestFile(path);
  EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(request.status().message(), HasSubstr("4096-byte limit"));
  // The default cap is 1 MiB.
  unsetenv("PLACEMENT_RECIPE_MAX_BYTES");
  EXPECT_TRUE(ReadPlanRequestFile(path).ok());
  const std::string huge =
      Write("recipes/huge.yaml",
            absl::StrCat(kRecipe, "# ", std::string(2 << 20, 'x'), "\n"));
  EXPECT_EQ(ReadPlanRequestFile(huge).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(RecipeFileTest, RefusesAFifoWithoutWaitingForAWriter) {
  const std::string fifo = absl::StrCat(dir_, "/recipes/fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_EQ(ReadPlanRequestFile(fifo).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace placement::placectl
