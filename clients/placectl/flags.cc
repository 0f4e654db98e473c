#include "clients/placectl/flags.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "clients/common/channel.h"

PLACECTL_FLAG(std::string, server, "", "*",
              "placementd address host:port (default: $PLACEMENT_SERVER, "
              "else 127.0.0.1:50051)");
PLACECTL_FLAG(bool, json, false, "*",
              "print JSON for machines instead of tables");

namespace placement::placectl {
namespace {

struct Use {
  std::set<std::string> commands;  // "*" for every command
  std::string help;
};

std::map<std::string, std::vector<Use>>& Registry() {
  static auto* const registry = new std::map<std::string, std::vector<Use>>;
  return *registry;
}

std::set<std::string>& GivenFlags() {
  static auto* const given = new std::set<std::string>;
  return *given;
}

// What --`name` means for `command`, or null when the command does not take
// it. Every command takes the global ones.
const Use* UseFor(const std::string& name, const std::string& command) {
  auto it = Registry().find(name);
  if (it == Registry().end()) {
    // A flag of placectl's own sources defined with plain ABSL_FLAG: taken
    // by every command rather than refused.
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr ||
        !absl::StrContains(flag->Filename(), "clients/placectl/")) {
      return nullptr;
    }
    static auto* const unregistered = new std::map<std::string, Use>;
    Use& use = (*unregistered)[name];
    use.commands = {"*"};
    use.help = flag->Help();
    return &use;
  }
  for (const Use& use : it->second) {
    if (use.commands.contains("*") || use.commands.contains(command)) {
      return &use;
    }
  }
  return nullptr;
}

bool IsHelp(absl::string_view arg) {
  return arg == "--help" || arg == "-help" || arg == "-h" ||
         arg == "--helpfull" || arg == "--helpshort";
}

// One flag token split up: "--name=value", "--name", "-name", "--noname".
struct FlagToken {
  std::string name;
  std::optional<std::string> value;
};

std::optional<FlagToken> SplitFlag(absl::string_view arg) {
  if (arg.size() < 2 || arg[0] != '-' || arg == "--") return std::nullopt;
  if (!absl::ConsumePrefix(&arg, "--")) absl::ConsumePrefix(&arg, "-");
  FlagToken token;
  const size_t equals = arg.find('=');
  token.name = std::string(arg.substr(0, equals));
  if (equals != absl::string_view::npos) {
    token.value = std::string(arg.substr(equals + 1));
  }
  return token;
}

// The absl flag a token names (a bool's "no" form included), with whether it
// was the negated form.
const absl::CommandLineFlag* FindFlag(const std::string& name, bool* negated) {
  *negated = false;
  if (const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name)) {
    return flag;
  }
  if (absl::StartsWith(name, "no")) {
    const absl::CommandLineFlag* flag =
        absl::FindCommandLineFlag(name.substr(2));
    if (flag != nullptr && flag->IsOfType<bool>()) {
      *negated = true;
      return flag;
    }
  }
  return nullptr;
}

std::string Describe(const std::string& name, const Use& use) {
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  std::string left = absl::StrCat("--", name);
  std::string help = use.help;
  if (flag != nullptr) {
    if (!flag->IsOfType<bool>()) absl::StrAppend(&left, "=", "VALUE");
    const std::string default_value = flag->DefaultValue();
    if (!default_value.empty() && default_value != "false" &&
        default_value != "0" && default_value != "-1") {
      absl::StrAppend(&help, " (default ", default_value, ")");
    }
  }
  return absl::StrFormat("  %-22s %s", left, help);
}

// The flags `command` takes beyond the global ones, by name.
std::vector<std::string> OwnFlags(const std::string& command) {
  std::vector<std::string> names;
  for (const auto& [name, uses] : Registry()) {
    for (const Use& use : uses) {
      if (use.commands.contains(command)) names.push_back(name);
    }
  }
  return names;
}

void PrintGlobalFlags(std::ostream& out) {
  out << "global flags (any command, before or after it):\n";
  for (const auto& [name, uses] : Registry()) {
    for (const Use& use : uses) {
      if (use.commands.contains("*")) out << Describe(name, use) << "\n";
    }
  }
}

void PrintCommandHelp(const CommandInfo& command, std::ostream& out) {
  out << "usage: placectl " << command.usage << "\n  " << command.summary
      << "\n";
  const std::vector<std::string> own = OwnFlags(command.path);
  if (own.empty()) {
    out << "flags: none of its own (global flags: placectl --help)\n";
    return;
  }
  out << "flags:\n";
  for (const std::string& name : own) {
    out << Describe(name, *UseFor(name, command.path)) << "\n";
  }
  out << "global flags: placectl --help\n";
}

// The positional words of a command line (the command and its operands)
// and whether it asks for --help.
struct Words {
  std::vector<std::string> positional;
  bool help = false;
};

// A flag that is not a bool takes the next word as its value unless given
// as --name=value; every word after "--" is positional.
Words ScanWords(int argc, char** argv) {
  Words words;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") {
      for (++i; i < argc; ++i) words.positional.emplace_back(argv[i]);
      break;
    }
    if (IsHelp(arg)) {
      words.help = true;
      continue;
    }
    std::optional<FlagToken> token = SplitFlag(arg);
    if (!token) {
      words.positional.emplace_back(arg);
      continue;
    }
    bool negated;
    const absl::CommandLineFlag* flag = FindFlag(token->name, &negated);
    if (flag != nullptr && !flag->IsOfType<bool>() && !token->value &&
        i + 1 < argc) {
      ++i;
    }
  }
  return words;
}

// The command: the longest known path the words start with; null when none.
const CommandInfo* FindCommand(const std::vector<CommandInfo>& commands,
                               const std::vector<std::string>& words) {
  const CommandInfo* command = nullptr;
  for (const CommandInfo& c : commands) {
    const std::vector<std::string> path = absl::StrSplit(c.path, ' ');
    if (path.size() > words.size()) continue;
    if (!std::equal(path.begin(), path.end(), words.begin())) continue;
    if (command == nullptr || c.path.size() > command->path.size())
      command = &c;
  }
  return command;
}

void PrintOverview(const std::string& overview,
                   const std::vector<CommandInfo>& commands) {
  std::cout << "usage: " << overview << "\n";
  for (const CommandInfo& c : commands) {
    std::cout << absl::StrFormat("  %-44s %s\n", c.usage, c.summary);
  }
  std::cout << "placectl COMMAND --help lists a command's flags\n";
  PrintGlobalFlags(std::cout);
}

// A group: "placectl pools --help". Returns 0, or 2 when `name` is no
// group's.
int PrintGroupHelp(const std::string& name,
                   const std::vector<CommandInfo>& commands) {
  std::vector<const CommandInfo*> group;
  for (const CommandInfo& c : commands) {
    if (absl::StartsWith(c.path, name + " ")) group.push_back(&c);
  }
  if (group.empty()) {
    std::cerr << "placectl: unknown command '" << name
              << "' (placectl --help lists them)\n";
    return 2;
  }
  std::cout << "placectl " << name << ": one of\n";
  for (const CommandInfo* c : group) {
    std::cout << absl::StrFormat("  %-44s %s\n", c->usage, c->summary);
  }
  std::cout << "placectl " << name
            << " SUBCOMMAND --help lists a subcommand's flags\n";
  return 0;
}

// --help for placectl, `command` or the group the words name: 0, or 2 for
// an unknown group.
int PrintHelp(const std::string& overview,
              const std::vector<CommandInfo>& commands,
              const std::vector<std::string>& words,
              const CommandInfo* command) {
  if (words.empty()) {
    PrintOverview(overview, commands);
    return 0;
  }
  if (command != nullptr) {
    PrintCommandHelp(*command, std::cout);
    return 0;
  }
  return PrintGroupHelp(words[0], commands);
}

// Why --`name` (a known flag) is refused on this command line: 2.
int RefuseFlag(const std::string& name, const CommandInfo* command) {
  if (command == nullptr) {
    std::cerr << "placectl: --" << name
              << " needs a command (placectl --help lists them)\n";
  } else {
    std::cerr << "placectl " << command->path << " does not take --" << name
              << " (placectl " << command->path << " --help lists its flags)\n";
  }
  return 2;
}

// Sets each flag of argv, refusing those `command` (null: none named) does
// not take. Returns -1 to go on, 2 after printing a usage error.
int SetFlags(int argc, char** argv, const CommandInfo* command) {
  const std::string command_path = command != nullptr ? command->path : "";
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") break;
    std::optional<FlagToken> token = SplitFlag(arg);
    if (!token) continue;
    bool negated;
    const absl::CommandLineFlag* flag = FindFlag(token->name, &negated);
    const std::string name = negated ? token->name.substr(2) : token->name;
    if (flag == nullptr) {
      std::cerr << "placectl: unknown flag --" << token->name
                << (command != nullptr
                        ? absl::StrCat(" (placectl ", command_path,
                                       " --help lists its flags)")
                        : std::string(" (placectl --help)"))
                << "\n";
      return 2;
    }
    if (UseFor(name, command_path) == nullptr) return RefuseFlag(name, command);
    std::string value;
    if (flag->IsOfType<bool>()) {
      value = negated ? "false" : token->value.value_or("true");
    } else if (token->value) {
      value = *token->value;
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      std::cerr << "placectl: --" << name << " needs a value\n";
      return 2;
    }
    std::string error;
    if (!absl::FindCommandLineFlag(name)->ParseFrom(value, &error)) {
      std::cerr << "placectl: --" << name << ": " << error << "\n";
      return 2;
    }
    GivenFlags().insert(name);
  }
  return -1;
}

}  // namespace

bool RegisterFlag(const char* name, const char* commands, const char* help) {
  Use use;
  for (absl::string_view command : absl::StrSplit(commands, '|')) {
    use.commands.insert(std::string(absl::StripAsciiWhitespace(command)));
  }
  use.help = help;
  Registry()[name].push_back(std::move(use));
  return true;
}

bool FlagGiven(const char* name) { return GivenFlags().contains(name); }

std::string ServerAddress() {
  return clients::ServerAddress(absl::GetFlag(FLAGS_server));
}

int ParseCommandLine(int argc, char** argv, const std::string& overview,
                     const std::vector<CommandInfo>& commands,
                     std::vector<std::string>* args) {
  // First the positional words, to know the command; then the flags, each
  // checked against it.
  Words words = ScanWords(argc, argv);
  const CommandInfo* command = FindCommand(commands, words.positional);
  if (words.help) {
    return PrintHelp(overview, commands, words.positional, command);
  }
  if (const int code = SetFlags(argc, argv, command); code != -1) return code;
  *args = std::move(words.positional);
  return -1;
}

}  // namespace placement::placectl
