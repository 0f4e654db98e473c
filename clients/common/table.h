#ifndef PLACEMENT_CLIENTS_COMMON_TABLE_H_
#define PLACEMENT_CLIENTS_COMMON_TABLE_H_

#include <ostream>
#include <string>
#include <vector>

namespace placement::clients {

// A plain-text table for terminals: a header row, then rows, columns padded
// to their widest cell. Columns marked numeric are right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> header,
                 std::vector<bool> numeric = {});

  void AddRow(std::vector<std::string> row);
  void Print(std::ostream& out) const;
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> header_;
  std::vector<bool> numeric_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace placement::clients

#endif  // PLACEMENT_CLIENTS_COMMON_TABLE_H_
