// swift-tools-version:6.0
import PackageDescription

// Layers point one way, downward:
//   tools -> JournalTools -> SyncJournalSync -> SyncJournalStore -> SyncJournalCore -> CSyncJournalCRC
//   SyncJournalHTTP -> SyncJournalWire -> SyncJournalSync
// SyncJournalTesting holds fault-injection seams that apps may use in their own tests.
let package = Package(
    name: "SyncJournal",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SyncJournal", targets: ["SyncJournal"]),
        .library(name: "SyncJournalTesting", targets: ["SyncJournalTesting"]),
        .library(name: "SyncJournalWire", targets: ["SyncJournalWire"]),
        .library(name: "SyncJournalHTTP", targets: ["SyncJournalHTTP"]),
        .executable(name: "sync-demo", targets: ["sync-demo"]),
        .executable(name: "journal-dump", targets: ["journal-dump"]),
        .executable(name: "journal-crash", targets: ["journal-crash"]),
        .executable(name: "journal-salvage", targets: ["journal-salvage"]),
        .executable(name: "sync-sim", targets: ["sync-sim"]),
        .executable(name: "fuzz-journal-reader", targets: ["fuzz-journal-reader"]),
        .executable(name: "fuzz-server-reply", targets: ["fuzz-server-reply"]),
        .executable(name: "fuzz-wire-messages", targets: ["fuzz-wire-messages"]),
        .executable(name: "journal-bench", targets: ["journal-bench"]),
        .executable(name: "sync-server", targets: ["sync-server"]),
        .executable(name: "sync-load", targets: ["sync-load"]),
    ],
    targets: [
        // Hardware CRC-32C (SSE4.2 / ARMv8 CRC) behind a run-time CPU check.
        .target(name: "CSyncJournalCRC"),
        // Files, records, checksums, recovery. Knows nothing about sync.
        .target(name: "SyncJournalCore", dependencies: ["CSyncJournalCRC"]),
        // Record payloads of the local store: operations and their field values.
        .target(name: "SyncJournalStore", dependencies: ["SyncJournalCore"]),
        // The sync engine, the transport protocol and its wire types.
        .target(name: "SyncJournalSync", dependencies: ["SyncJournalStore"]),
        // The HTTP protocol's strict JSON and message codecs (journals/PROTOCOL.md),
        // shared by the HTTP transport and the server.
        .target(name: "SyncJournalWire", dependencies: ["SyncJournalStore", "SyncJournalSync"]),
        // SyncTransport over URLSession (FoundationNetworking on Linux).
        .target(name: "SyncJournalHTTP", dependencies: ["SyncJournalWire", "SyncJournalStore", "SyncJournalSync"]),
        // The library product: one import for apps.
        .target(name: "SyncJournal", dependencies: ["SyncJournalCore", "SyncJournalStore", "SyncJournalSync"]),
        // Test support apps can use too: fault-injecting system calls and
        // transport, the in-memory reference server.
        .target(name: "SyncJournalTesting", dependencies: ["SyncJournalCore", "SyncJournalStore", "SyncJournalSync"]),
        // The deterministic sync simulator and its scenario language.
        .target(name: "SyncJournalSimulator", dependencies: ["SyncJournalCore", "SyncJournalStore", "SyncJournalSync", "SyncJournalTesting", "SyncJournalHTTP", "SyncJournalWire"]),
        // The logic behind the command-line tools, so it is testable in-process.
        .target(name: "JournalTools", dependencies: ["SyncJournalCore", "SyncJournalStore", "SyncJournalSync", "SyncJournalTesting", "SyncJournalHTTP", "SyncJournalWire"]),

        // The system SQLite: journal-bench's baseline and sync-server's storage.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // The benchmark's logic: workloads, baselines (raw disk, SQLite), report.
        .target(name: "JournalBench", dependencies: ["SyncJournalCore", "SyncJournalStore", "SyncJournalSync", "SyncJournalTesting", "JournalTools", "CSQLite"]),
        .executableTarget(name: "journal-bench", dependencies: ["JournalBench"], path: "tools/journal-bench"),
        // The system libpq: sync-server's PostgreSQL storage.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // The HTTP sync server: HTTP/1.1 on Glibc sockets, routing, SQLite and PostgreSQL storage.
        // PostgreSQL lives in this module, not a separate one: sync-server is its only user and
        // must link libpq anyway to offer --postgres, and StorageError names its error type.
        .target(name: "SyncJournalServer", dependencies: ["SyncJournalCore", "SyncJournalStore", "SyncJournalSync", "SyncJournalWire", "CSQLite", "CLibPQ"]),
        .executableTarget(name: "sync-server", dependencies: ["SyncJournalServer"], path: "tools/sync-server"),
        // The load generator: concurrent HTTP clients against a running sync-server (any backend).
        .target(name: "SyncJournalLoad", dependencies: ["SyncJournalHTTP", "SyncJournalSync", "SyncJournalStore"]),
        .executableTarget(name: "sync-load", dependencies: ["SyncJournalLoad"], path: "tools/sync-load"),

        .executableTarget(name: "sync-demo", dependencies: ["JournalTools"], path: "tools/sync-demo"),
        .executableTarget(name: "journal-dump", dependencies: ["JournalTools"], path: "tools/journal-dump"),
        .executableTarget(name: "journal-crash", dependencies: ["JournalTools"], path: "tools/journal-crash"),
        .executableTarget(name: "journal-salvage", dependencies: ["JournalTools"], path: "tools/journal-salvage"),
        .executableTarget(name: "sync-sim", dependencies: ["SyncJournalSimulator"], path: "tools/sync-sim"),
        // Fuzz targets: built normally they replay input files (the regression
        // corpus); tools/fuzz.sh builds them with libFuzzer (-sanitize=fuzzer).
        .executableTarget(name: "fuzz-journal-reader", dependencies: ["JournalTools"], path: "tools/fuzz-journal-reader"),
        .executableTarget(name: "fuzz-server-reply", dependencies: ["JournalTools"], path: "tools/fuzz-server-reply"),
        .executableTarget(name: "fuzz-wire-messages", dependencies: ["JournalTools"], path: "tools/fuzz-wire-messages"),

        .testTarget(name: "SyncJournalCoreTests", dependencies: ["SyncJournalCore", "SyncJournalTesting"]),
        .testTarget(name: "SyncJournalTests", dependencies: ["SyncJournal", "SyncJournalTesting"]),
        .testTarget(name: "SyncJournalSyncTests", dependencies: ["SyncJournalSync", "SyncJournalStore", "SyncJournalCore", "SyncJournalTesting"]),
        .testTarget(name: "SyncJournalStoreTests", dependencies: ["SyncJournalStore", "SyncJournalCore", "SyncJournalTesting"]),
        .testTarget(
            name: "SyncJournalSimulatorTests",
            dependencies: ["SyncJournalSimulator", "SyncJournalTesting", "SyncJournalStore", "SyncJournalSync", "SyncJournalCore", "sync-sim"],
            resources: [.copy("Scenarios")]
        ),
        .testTarget(name: "JournalBenchTests", dependencies: ["JournalBench"]),
        .testTarget(name: "SyncJournalWireTests", dependencies: ["SyncJournalWire", "SyncJournalSync", "SyncJournalStore"]),
        .testTarget(name: "SyncJournalHTTPTests", dependencies: ["SyncJournalHTTP", "SyncJournalWire", "SyncJournalSync", "SyncJournalStore", "SyncJournalTesting"]),
        .testTarget(
            name: "SyncJournalServerTests",
            dependencies: ["SyncJournalServer", "SyncJournalWire", "SyncJournalHTTP", "SyncJournalTesting", "SyncJournalStore", "SyncJournalSync", "sync-server"]
        ),
        .testTarget(name: "SyncJournalLoadTests", dependencies: ["SyncJournalLoad"]),
        // The client tools run as binaries against the sync-server binary.
        .testTarget(name: "ServerClientToolsTests", dependencies: ["SyncJournalTesting", "sync-server", "sync-demo", "sync-sim", "sync-load"]),
        .testTarget(
            name: "JournalToolsTests",
            dependencies: ["JournalTools", "SyncJournalCore", "SyncJournalStore", "SyncJournalTesting", "journal-dump", "journal-crash", "journal-salvage", "sync-demo"],
            resources: [.copy("Expected")]
        ),
    ]
)
