#include "clients/placectl/recipe_file.h"

#include <fcntl.h>
#include <google/protobuf/util/json_util.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"

namespace placement::placectl {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;

// The prefix every value of `type` carries ("FINE_TUNE_METHOD_"), from its
// zero value ("FINE_TUNE_METHOD_UNSPECIFIED").
std::string EnumPrefix(const EnumDescriptor& type) {
  const google::protobuf::EnumValueDescriptor* zero = type.FindValueByNumber(0);
  if (zero == nullptr) return "";
  absl::string_view name = zero->name();
  return absl::ConsumeSuffix(&name, "UNSPECIFIED") ? std::string(name) : "";
}

std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// "recipe.lora_rank (line 4)".
std::string Where(const std::string& path, const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.line < 0) return path;
  return absl::StrCat(path, " (line ", mark.line + 1, ")");
}

absl::Status Bad(const std::string& path, const YAML::Node& node,
                 absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(Where(path, node), ": ", what));
}

const char* KindName(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    default:
      return "nothing";
  }
}

const FieldDescriptor* FindField(const Descriptor& type,
                                 absl::string_view key) {
  for (int i = 0; i < type.field_count(); ++i) {
    const FieldDescriptor* field = type.field(i);
    if (field->name() == key || field->json_name() == key) return field;
  }
  return nullptr;
}

absl::Status AppendMessage(const YAML::Node& node, const Descriptor& type,
                           const std::string& path, std::string* out);

// A google.protobuf.Duration from "12h", "90m" or "43200s".
absl::Status AppendDuration(const YAML::Node& node, const std::string& path,
                            std::string* out) {
  if (!node.IsScalar()) return Bad(path, node, "expected a duration like 12h");
  absl::Duration duration;
  if (!absl::ParseDuration(node.Scalar(), &duration) ||
      duration < absl::ZeroDuration()) {
    return Bad(path, node,
               absl::StrCat("expected a duration like 12h or 90m, got \"",
                            node.Scalar(), "\""));
  }
  const int64_t seconds = absl::ToInt64Seconds(duration);
  const int64_t nanos =
      absl::ToInt64Nanoseconds(duration - absl::Seconds(seconds));
  *out += nanos == 0 ? JsonString(absl::StrCat(seconds, "s"))
                     : JsonString(absl::StrFormat("%d.%09ds", seconds, nanos));
  return absl::OkStatus();
}

// A message-typed value: the well-known Duration and Timestamp from their
// text, any other message field by field.
absl::Status AppendMessageValue(const YAML::Node& node, const Descriptor& type,
                                const std::string& path, std::string* out) {
  if (type.full_name() == "google.protobuf.Duration") {
    return AppendDuration(node, path, out);
  }
  if (type.full_name() == "google.protobuf.Timestamp") {
    if (!node.IsScalar()) return Bad(path, node, "expected an RFC 3339 time");
    *out += JsonString(node.Scalar());
    return absl::OkStatus();
  }
  return AppendMessage(node, type, path, out);
}

absl::Status AppendBool(const YAML::Node& node, const std::string& path,
                        std::string* out) {
  const std::string lower = absl::AsciiStrToLower(node.Scalar());
  if (lower == "true" || lower == "yes" || lower == "on") {
    *out += "true";
  } else if (lower == "false" || lower == "no" || lower == "off") {
    *out += "false";
  } else {
    return Bad(
        path, node,
        absl::StrCat("expected true or false, got \"", node.Scalar(), "\""));
  }
  return absl::OkStatus();
}

// Integers are quoted: proto JSON takes int64 as a string, and every
// integer so.
absl::Status AppendSignedInteger(const YAML::Node& node,
                                 const FieldDescriptor& field,
                                 const std::string& path, std::string* out) {
  int64_t value;
  if (!absl::SimpleAtoi(node.Scalar(), &value) ||
      (field.cpp_type() == FieldDescriptor::CPPTYPE_INT32 &&
       (value < INT32_MIN || value > INT32_MAX))) {
    return Bad(
        path, node,
        absl::StrCat("expected an integer, got \"", node.Scalar(), "\""));
  }
  *out += JsonString(absl::StrCat(value));
  return absl::OkStatus();
}

absl::Status AppendUnsignedInteger(const YAML::Node& node,
                                   const std::string& path, std::string* out) {
  uint64_t value;
  if (!absl::SimpleAtoi(node.Scalar(), &value)) {
    return Bad(path, node,
               absl::StrCat("expected a non-negative integer, got \"",
                            node.Scalar(), "\""));
  }
  *out += JsonString(absl::StrCat(value));
  return absl::OkStatus();
}

absl::Status AppendNumber(const YAML::Node& node, const std::string& path,
                          std::string* out) {
  double value;
  if (!absl::SimpleAtod(node.Scalar(), &value)) {
    return Bad(path, node,
               absl::StrCat("expected a number, got \"", node.Scalar(), "\""));
  }
  *out += JsonString(node.Scalar());
  return absl::OkStatus();
}

absl::Status AppendEnum(const YAML::Node& node, const EnumDescriptor& type,
                        const std::string& path, std::string* out) {
  absl::StatusOr<int> value = ParseEnumText(type, node.Scalar());
  if (!value.ok()) return Bad(path, node, value.status().message());
  *out += JsonString(type.FindValueByNumber(*value)->name());
  return absl::OkStatus();
}

// One value (an element, for a repeated field) of `field`.
absl::Status AppendValue(const YAML::Node& node, const FieldDescriptor& field,
                         const std::string& path, std::string* out) {
  if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    return AppendMessageValue(node, *field.message_type(), path, out);
  }
  if (!node.IsScalar()) {
    return Bad(path, node,
               absl::StrCat("expected a single value, got ", KindName(node)));
  }
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING:
      *out += JsonString(node.Scalar());
      return absl::OkStatus();
    case FieldDescriptor::CPPTYPE_BOOL:
      return AppendBool(node, path, out);
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
      return AppendSignedInteger(node, field, path, out);
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
      return AppendUnsignedInteger(node, path, out);
    case FieldDescriptor::CPPTYPE_FLOAT:
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return AppendNumber(node, path, out);
    case FieldDescriptor::CPPTYPE_ENUM:
      return AppendEnum(node, *field.enum_type(), path, out);
    default:
      return Bad(path, node, "unsupported field type");
  }
}

absl::Status AppendField(const YAML::Node& node, const FieldDescriptor& field,
                         const std::string& path, std::string* out) {
  if (field.is_map()) {
    if (!node.IsMap()) {
      return Bad(path, node,
                 absl::StrCat("expected a mapping, got ", KindName(node)));
    }
    const FieldDescriptor& value_field = *field.message_type()->map_value();
    *out += "{";
    bool first = true;
    for (const auto& entry : node) {
      if (!entry.first.IsScalar()) return Bad(path, entry.first, "bad key");
      if (!first) *out += ",";
      first = false;
      const std::string& key = entry.first.Scalar();
      *out += JsonString(key) + ":";
      absl::Status status = AppendValue(entry.second, value_field,
                                        absl::StrCat(path, ".", key), out);
      if (!status.ok()) return status;
    }
    *out += "}";
    return absl::OkStatus();
  }
  if (field.is_repeated()) {
    std::vector<YAML::Node> elements;
    if (node.IsSequence()) {
      for (const auto& element : node) elements.push_back(element);
    } else if (node.IsScalar() &&
               field.cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      // "q,v" for [q, v].
      for (absl::string_view part :
           absl::StrSplit(node.Scalar(), ',', absl::SkipWhitespace())) {
        elements.push_back(
            YAML::Node(std::string(absl::StripAsciiWhitespace(part))));
      }
    } else {
      return Bad(path, node,
                 absl::StrCat("expected a list, got ", KindName(node)));
    }
    *out += "[";
    for (size_t i = 0; i < elements.size(); ++i) {
      if (i > 0) *out += ",";
      absl::Status status =
          AppendValue(elements[i], field, absl::StrCat(path, "[", i, "]"), out);
      if (!status.ok()) return status;
    }
    *out += "]";
    return absl::OkStatus();
  }
  return AppendValue(node, field, path, out);
}

// Recipe's activation_checkpointing key names the ActivationCheckpointing
// enum field, not the deprecated boolean of that name.
const FieldDescriptor* CheckpointingModeField(const Descriptor& type,
                                              const FieldDescriptor& field) {
  if (type.full_name() != "placement.v1.Recipe" ||
      field.name() != "activation_checkpointing") {
    return nullptr;
  }
  return type.FindFieldByName("activation_checkpointing_mode");
}

absl::Status AppendCheckpointingMode(const YAML::Node& node,
                                     const FieldDescriptor& mode,
                                     const std::string& path,
                                     std::string* out) {
  if (!node.IsScalar()) return Bad(path, node, "expected on or off");
  std::string text = absl::AsciiStrToLower(node.Scalar());
  if (text == "true" || text == "yes") text = "on";
  if (text == "false" || text == "no") text = "off";
  absl::StatusOr<int> value = ParseEnumText(*mode.enum_type(), text);
  if (!value.ok()) return Bad(path, node, value.status().message());
  *out += JsonString(mode.enum_type()->FindValueByNumber(*value)->name());
  return absl::OkStatus();
}

absl::Status AppendMessage(const YAML::Node& node, const Descriptor& type,
                           const std::string& path, std::string* out) {
  if (!node.IsMap()) {
    return Bad(path.empty() ? "the file" : path, node,
               absl::StrCat("expected a mapping of ", type.name(),
                            " fields, got ", KindName(node)));
  }
  *out += "{";
  bool first = true;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) {
      return Bad(path.empty() ? "the file" : path, entry.first,
                 "field names must be plain keys");
    }
    const std::string& key = entry.first.Scalar();
    const std::string field_path =
        path.empty() ? key : absl::StrCat(path, ".", key);
    const FieldDescriptor* field = FindField(type, key);
    if (field == nullptr) {
      std::vector<std::string> known;
      for (int i = 0; i < type.field_count(); ++i) {
        known.push_back(type.field(i)->name());
      }
      return Bad(field_path, entry.first,
                 absl::StrCat("unknown field \"", key, "\" (", type.name(),
                              " has ", absl::StrJoin(known, ", "), ")"));
    }
    if (entry.second.IsNull()) continue;  // "key:" or "key: null": unset
    if (!first) *out += ",";
    first = false;
    if (const FieldDescriptor* mode = CheckpointingModeField(type, *field)) {
      // "activation_checkpointing: on|off" (or the former true|false) in a
      // file says it explicitly, which the deprecated wire boolean cannot.
      *out += JsonString(mode->name()) + ":";
      absl::Status status =
          AppendCheckpointingMode(entry.second, *mode, field_path, out);
      if (!status.ok()) return status;
      continue;
    }
    *out += JsonString(field->name()) + ":";
    absl::Status status = AppendField(entry.second, *field, field_path, out);
    if (!status.ok()) return status;
  }
  *out += "}";
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int> ParseEnumText(const EnumDescriptor& type,
                                  absl::string_view text) {
  const std::string trimmed(absl::StripAsciiWhitespace(text));
  int number;
  if (absl::SimpleAtoi(trimmed, &number) &&
      type.FindValueByNumber(number) != nullptr) {
    return number;
  }
  const std::string upper =
      absl::StrReplaceAll(absl::AsciiStrToUpper(trimmed), {{"-", "_"}});
  const std::string prefix = EnumPrefix(type);
  for (const std::string& name : {upper, prefix + upper}) {
    if (const auto* value = type.FindValueByName(name)) return value->number();
  }
  // A unique suffix: "cost" for OBJECTIVE_LOWEST_COST.
  const google::protobuf::EnumValueDescriptor* match = nullptr;
  int matches = 0;
  for (int i = 0; i < type.value_count() && !upper.empty(); ++i) {
    if (type.value(i)->number() != 0 &&
        absl::EndsWith(type.value(i)->name(), absl::StrCat("_", upper))) {
      match = type.value(i);
      ++matches;
    }
  }
  if (matches == 1) return match->number();
  std::vector<std::string> names;
  for (int i = 0; i < type.value_count(); ++i) {
    if (type.value(i)->number() != 0) {
      names.push_back(EnumShortName(type, type.value(i)->number()));
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat(matches > 1 ? "ambiguous " : "unknown ", type.name(), " \"",
                   trimmed, "\" (one of ", absl::StrJoin(names, ", "), ")"));
}

std::string EnumShortName(const EnumDescriptor& type, int value) {
  const auto* descriptor = type.FindValueByNumber(value);
  if (descriptor == nullptr) return absl::StrCat(value);
  if (value == 0) return "-";
  absl::string_view name = descriptor->name();
  absl::ConsumePrefix(&name, EnumPrefix(type));
  return absl::StrReplaceAll(absl::AsciiStrToLower(name), {{"_", "-"}});
}

absl::StatusOr<std::string> YamlToProtoJson(absl::string_view yaml,
                                            const Descriptor& descriptor) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("not valid YAML or JSON: ", e.what()));
  }
  if (root.IsNull()) {
    return absl::InvalidArgumentError(
        absl::StrCat("empty: expected a ", descriptor.name()));
  }
  std::string json;
  try {
    absl::Status status = AppendMessage(root, descriptor, "", &json);
    if (!status.ok()) return status;
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(e.what());
  }
  return json;
}

absl::StatusOr<v1::PlacePlanRequest> ParsePlanRequestText(
    absl::string_view text, absl::string_view source) {
  absl::StatusOr<std::string> json =
      YamlToProtoJson(text, *v1::PlacePlanRequest::descriptor());
  if (!json.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": ", json.status().message()));
  }
  v1::PlacePlanRequest request;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto parsed =
      google::protobuf::util::JsonStringToMessage(*json, &request, options);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": ", std::string(parsed.message())));
  }
  return request;
}

RecipeFileLimits RecipeFileLimitsFromEnvironment() {
  RecipeFileLimits limits;
  if (const char* roots = std::getenv("PLACEMENT_RECIPE_ROOTS");
      roots != nullptr) {
    limits.roots = absl::StrSplit(roots, ':', absl::SkipWhitespace());
  }
  int64_t max_bytes = 0;
  if (const char* max = std::getenv("PLACEMENT_RECIPE_MAX_BYTES");
      max != nullptr && absl::SimpleAtoi(max, &max_bytes) && max_bytes > 0) {
    limits.max_bytes = max_bytes;
  }
  return limits;
}

namespace {

absl::Status TooLarge(const std::string& path, const RecipeFileLimits& limits) {
  return absl::InvalidArgumentError(absl::StrCat(
      path, " is over the ", limits.max_bytes,
      "-byte limit for a recipe file (PLACEMENT_RECIPE_MAX_BYTES)"));
}

// Where the open file `fd` really is: symlinks and ".." resolved, and no
// window for the path to be swapped after the check.
std::string ResolvedPath(int fd, const std::string& path) {
  char resolved[PATH_MAX];
  const std::string link = absl::StrCat("/proc/self/fd/", fd);
  const ssize_t n = readlink(link.c_str(), resolved, sizeof(resolved) - 1);
  if (n > 0) return std::string(resolved, static_cast<size_t>(n));
  return realpath(path.c_str(), resolved) != nullptr ? resolved : "";
}

bool UnderRoot(const std::string& resolved, const std::string& root) {
  char real_root[PATH_MAX];
  if (realpath(root.c_str(), real_root) == nullptr) return false;
  const absl::string_view base = absl::StripSuffix(real_root, "/");
  return absl::StartsWith(resolved, base) &&
         (resolved.size() == base.size() || resolved[base.size()] == '/');
}

// Reads at most limits.max_bytes from `fd`; over it is an error.
absl::StatusOr<std::string> ReadCapped(int fd, const std::string& path,
                                       const RecipeFileLimits& limits) {
  std::string text;
  char buffer[8192];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n == 0) return text;
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::NotFoundError(
          absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
    }
    text.append(buffer, static_cast<size_t>(n));
    if (static_cast<int64_t>(text.size()) > limits.max_bytes) {
      return TooLarge(path, limits);
    }
  }
}

absl::Status OutsideRoots(const std::string& path, const std::string& resolved,
                          const RecipeFileLimits& limits) {
  return absl::PermissionDeniedError(absl::StrCat(
      path, " resolves to ", resolved.empty() ? "?" : resolved,
      ", outside the recipe folders ", absl::StrJoin(limits.roots, ":"),
      " (PLACEMENT_RECIPE_ROOTS)"));
}

bool UnderAnyRoot(const std::string& resolved, const RecipeFileLimits& limits) {
  if (resolved.empty()) return false;
  for (const std::string& root : limits.roots) {
    if (UnderRoot(resolved, root)) return true;
  }
  return false;
}

// Where `path` leads before anything opens it: symlinks and ".." resolved,
// or, for a path that does not exist, its folder resolved; "" when neither
// resolves.
std::string ResolvedBeforeOpening(const std::string& path) {
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) != nullptr) return resolved;
  const size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos
                                 ? "."
                                 : path.substr(0, std::max<size_t>(slash, 1));
  if (realpath(folder.c_str(), resolved) == nullptr) return "";
  return absl::StrCat(
      absl::StripSuffix(resolved, "/"), "/",
      slash == std::string::npos ? path : path.substr(slash + 1));
}

absl::StatusOr<std::string> ReadOpenRecipe(int fd, const std::string& path,
                                           const RecipeFileLimits& limits) {
  struct stat info;
  if (fstat(fd, &info) != 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  if (!S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        " is not a regular file (a device, pipe or folder); give a "
        "recipe file, or - for standard input"));
  }
  // Again on the open file: the path may have been swapped since the check
  // before opening it.
  if (!limits.roots.empty()) {
    const std::string resolved = ResolvedPath(fd, path);
    if (!UnderAnyRoot(resolved, limits)) {
      return OutsideRoots(path, resolved, limits);
    }
  }
  if (info.st_size > limits.max_bytes) return TooLarge(path, limits);
  return ReadCapped(fd, path, limits);
}

}  // namespace

absl::StatusOr<std::string> ReadRecipeFile(const std::string& path,
                                           const RecipeFileLimits& limits) {
  if (path == "-") return ReadCapped(STDIN_FILENO, "stdin", limits);
  // Nothing outside the roots is opened: opening has effects of its own (a
  // tape rewinds, a FIFO's writer wakes, a missing file tells its caller it
  // is missing), and slurmctld runs this as SlurmUser on a submitter's path.
  if (!limits.roots.empty()) {
    const std::string resolved = ResolvedBeforeOpening(path);
    if (!UnderAnyRoot(resolved, limits)) {
      return OutsideRoots(path, resolved, limits);
    }
  }
  // O_NONBLOCK: opening a FIFO must not wait for a writer before it is
  // refused.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  absl::StatusOr<std::string> text = ReadOpenRecipe(fd, path, limits);
  close(fd);
  return text;
}

absl::StatusOr<v1::PlacePlanRequest> ReadPlanRequestFile(
    const std::string& path) {
  absl::StatusOr<std::string> text =
      ReadRecipeFile(path, RecipeFileLimitsFromEnvironment());
  if (!text.ok()) return text.status();
  return ParsePlanRequestText(*text, path == "-" ? "stdin" : path);
}

}  // namespace placement::placectl
