#include "storage/stores/token_store.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "storage/schema/schema_requirement.h"
#include "storage/wire/hex.h"
#include "storage/wire/pq_values.h"

namespace placement::storage {
namespace {

constexpr char kInsertToken[] = R"sql(
INSERT INTO api_tokens (token_id, name, role, secret_hash)
VALUES ($1::uuid, $2, $3, decode($4, 'hex')))sql";

// A bound token: only on a schema with migration 0023's column.
constexpr char kInsertBoundToken[] = R"sql(
INSERT INTO api_tokens (token_id, name, role, secret_hash, teams)
VALUES ($1::uuid, $2, $3, decode($4, 'hex'), $5::text[]))sql";

// The columns of a token. Its teams (migration 0023) are read through
// to_jsonb, so that the statements also run on an older schema (no teams:
// unbound).
#define PLACEMENT_TOKEN_COLUMNS                                      \
  "t.token_id::text, t.name, t.role, encode(t.secret_hash, 'hex'), " \
  "(extract(epoch FROM t.created_at) * 1e6)::bigint, "               \
  "(extract(epoch FROM t.revoked_at) * 1e6)::bigint, "               \
  "ARRAY(SELECT jsonb_array_elements_text(to_jsonb(t) -> 'teams'))::text "

constexpr char kRevokeToken[] =
    "UPDATE api_tokens t SET revoked_at = coalesce(revoked_at, now()) "
    "WHERE token_id = $1::uuid RETURNING " PLACEMENT_TOKEN_COLUMNS;

constexpr char kListTokens[] = "SELECT " PLACEMENT_TOKEN_COLUMNS
                               "FROM api_tokens t "
                               "ORDER BY created_at DESC, token_id";

constexpr char kListChangedTokens[] =
    "SELECT " PLACEMENT_TOKEN_COLUMNS
    "FROM api_tokens t WHERE" PLACEMENT_CHANGED_SINCE(
        "change_xid") "ORDER BY token_id";

// Newest first; ties (same microsecond) by id. The cursor is compared in
// exact microseconds.
constexpr char kListTokensAfter[] = "SELECT " PLACEMENT_TOKEN_COLUMNS
                                    "FROM api_tokens t "
                                    R"sql(
WHERE $1::boolean
   OR created_at < 'epoch'::timestamptz + $2::bigint * interval '1 microsecond'
   OR (created_at = 'epoch'::timestamptz + $2::bigint * interval '1 microsecond'
       AND token_id > $3::uuid)
ORDER BY created_at DESC, token_id
LIMIT $4)sql";

TokenRecord FromRow(const pqxx::row& row) {
  TokenRecord token;
  token.token_id = row[0].as<std::string>();
  token.name = row[1].as<std::string>();
  token.role = row[2].as<std::string>();
  token.secret_hash = HexDecode(row[3].as<std::string>());
  token.created_at = absl::FromUnixMicros(row[4].as<int64_t>());
  if (!row[5].is_null()) {
    token.revoked_at = absl::FromUnixMicros(row[5].as<int64_t>());
  }
  token.teams = ParseTextArray(row[6].as<std::string>());
  return token;
}

#undef PLACEMENT_TOKEN_COLUMNS

}  // namespace

absl::Status InsertToken(DbSession& session, const TokenRecord& token) {
  return session.Run([&](pqxx::connection_base& c) -> absl::Status {
    pqxx::work txn(c);
    if (token.teams.empty()) {
      txn.exec_params(kInsertToken, token.token_id, token.name, token.role,
                      HexEncode(token.secret_hash));
    } else {
      if (!HasColumn(txn, "api_tokens", "teams")) {
        return SchemaLacks("tokens bound to teams", 23);
      }
      txn.exec_params(kInsertBoundToken, token.token_id, token.name, token.role,
                      HexEncode(token.secret_hash),
                      TextArrayLiteral(token.teams));
    }
    txn.commit();
    return absl::OkStatus();
  });
}

absl::StatusOr<TokenRecord> RevokeToken(DbSession& session,
                                        const std::string& token_id) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<TokenRecord> {
        pqxx::work txn(c);
        const pqxx::result rows = txn.exec_params(kRevokeToken, token_id);
        if (rows.empty()) {
          return absl::NotFoundError(absl::StrCat("no token ", token_id));
        }
        TokenRecord token = FromRow(rows[0]);
        txn.commit();
        return token;
      });
}

std::vector<TokenRecord> ReadTokens(pqxx::transaction_base& txn) {
  std::vector<TokenRecord> tokens;
  for (const pqxx::row& row : txn.exec(kListTokens)) {
    tokens.push_back(FromRow(row));
  }
  return tokens;
}

std::vector<TokenRecord> ReadTokensChangedSince(
    pqxx::transaction_base& txn, const TransactionHorizon& since) {
  std::vector<TokenRecord> tokens;
  for (const pqxx::row& row :
       txn.exec_params(kListChangedTokens, since.ToText(), since.xmin)) {
    tokens.push_back(FromRow(row));
  }
  return tokens;
}

absl::StatusOr<std::vector<TokenRecord>> ListTokens(DbSession& session) {
  return session.Run([&](pqxx::connection_base& c)
                         -> absl::StatusOr<std::vector<TokenRecord>> {
    pqxx::read_transaction txn(c);
    return ReadTokens(txn);
  });
}

absl::StatusOr<TokenPage> ListTokensPage(DbSession& session,
                                         const TokenCursor& after, int limit) {
  return session.Run(
      [&](pqxx::connection_base& c) -> absl::StatusOr<TokenPage> {
        pqxx::read_transaction txn(c);
        const bool from_start = after.token_id.empty();
        const int64_t micros =
            from_start ? 0 : absl::ToUnixMicros(after.created_at);
        const std::string token_id =
            from_start ? "00000000-0000-0000-0000-000000000000"
                       : after.token_id;
        TokenPage page;
        for (const pqxx::row& row : txn.exec_params(
                 kListTokensAfter, from_start, micros, token_id, limit + 1)) {
          if (static_cast<int>(page.tokens.size()) == limit) {
            page.more = true;
            break;
          }
          page.tokens.push_back(FromRow(row));
        }
        return page;
      });
}

}  // namespace placement::storage
