import SyncJournalProtocol

extension PostgreSQLTransaction {
    /// Deletes at most `limit` operations remembered before `cutoff` (or,
    /// when `nil`, `retentionMilliseconds` before the database server's
    /// clock), oldest first, and returns how many it deleted.
    func forgetOperations(rememberedBefore cutoff: Int64?, retentionMilliseconds: Int64, limit: Int) throws(StorageError) -> Int {
        let rows: PostgreSQLRows
        do throws(PostgreSQLError) {
            rows = try connection.execute("""
                with doomed as (
                  select owner, operation_id from operations
                  where remembered_at < coalesce($1::int8, (extract(epoch from clock_timestamp()) * 1000)::bigint - $2::int8)
                  order by remembered_at limit $3
                  for update skip locked
                ),
                forgotten as (
                  delete from operations using doomed
                  where operations.owner = doomed.owner and operations.operation_id = doomed.operation_id
                  returning 1
                )
                select count(*)::int8 from forgotten
                """, [.int64(cutoff), .int64(retentionMilliseconds), .int64(Int64(limit))])
        } catch {
            throw .postgres(error)
        }
        do throws(PostgreSQLError) { return Int(try rows.int64(0, 0)) } catch {
            throw .corrupt(table: "operations", key: "pruning", reason: error.message)
        }
    }
}
