import Foundation
import SyncJournalServer

/// A schema of its own for one test (tests run in parallel and each expects
/// empty tables and its own stamp row), dropped when the test ends.
/// ``connection`` points `search_path` at it through libpq's `options`.
final class PostgreSQLTestSchema: Sendable {
    /// The schema's name: `t_` and 32 hex digits (made here, never from input).
    let name: String
    /// The test server's connection string with `search_path` set to the schema.
    let connection: String
    private let server: String

    init() throws {
        server = try PostgreSQLTestDatabase.connection()
        name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let admin = try PostgreSQLConnection(connection: server, applicationName: "syncjournal-tests")
        // An identifier cannot be a parameter; the name is ours and only [t_0-9a-f].
        try admin.execute("create schema \(name)")
        admin.close()
        connection = Self.connection(server, setting: "-c search_path=\(name)")
    }

    /// `server` with libpq's `options` added (keyword/value form, or a URI's query).
    static func connection(_ server: String, setting options: String) -> String {
        if server.contains("://") {
            let encoded = options.replacingOccurrences(of: " ", with: "%20").replacingOccurrences(of: "=", with: "%3D")
            return server + (server.contains("?") ? "&" : "?") + "options=" + encoded
        }
        return server + " options='\(options)'"
    }

    /// ``connection`` with one more libpq keyword (keyword/value form, or a URI's query).
    func connection(adding keyword: String, _ value: String) -> String {
        if connection.contains("://") {
            return connection + (connection.contains("?") ? "&" : "?") + keyword + "=" + value
        }
        return connection + " \(keyword)=\(value)"
    }

    deinit {
        if let admin = try? PostgreSQLConnection(connection: server, applicationName: "syncjournal-tests") {
            _ = try? admin.execute("drop schema \(name) cascade")
            admin.close()
        }
    }
}
