// swift-tools-version:6.0
import PackageDescription

// Layers point one way, downward:
//   tools -> one logic module per tool -> SyncJournalSync -> SyncJournalStore -> SyncJournalCore -> CSyncJournalCRC
//   SyncJournalStore -> SyncJournalFieldCodec -> SyncJournalCore
//   SyncJournalSync, SyncJournalStore, SyncJournalFieldCodec -> SyncJournalProtocol
//   SyncJournalHTTP -> SyncJournalWire -> SyncJournalProtocol
//   sync-server -> SyncJournalServer -> SyncJournalWire, SyncJournalFieldCodec, SyncJournalProtocol
// SyncJournalProtocol depends on nothing: the client, the wire and every server share it.
//   everything that makes system calls -> SyncJournalPlatform (with SyncJournalServerPlatform, the only modules naming Glibc, Musl or Darwin)
//   the server and the load generator -> SyncJournalServerPlatform (sockets) -> CSyncJournalEventPoll (epoll, kqueue)
//   every tool -> SyncJournalCommandLine (the shared argument parser)
// SyncJournalTesting holds fault-injection seams that apps may use in their own tests.
let package = Package(
    name: "SyncJournal",
    platforms: [.iOS(.v17), .macOS(.v14), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
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
        .executable(name: "notes", targets: ["notes"]),
    ],
    targets: [
        // Thin typed wrappers over the system calls (files, the durability barrier,
        // threads, clocks, processes) with Linux and Darwin branches and named errno
        // values. Package access only: not part of any product's API.
        .target(name: "SyncJournalPlatform"),
        // What only servers and their load generator need, kept out of every
        // app: sockets, the readiness poller, pipes, the open-file limit.
        .target(name: "SyncJournalServerPlatform", dependencies: ["SyncJournalPlatform", "CSyncJournalEventPoll"]),
        // The readiness queue: epoll on Linux, kqueue on Darwin (Swift's Glibc module has no epoll).
        .target(name: "CSyncJournalEventPoll"),
        // Hardware CRC-32C (SSE4.2 / ARMv8 CRC) behind a run-time CPU check.
        .target(name: "CSyncJournalCRC"),
        // Starting the tests' child processes with every other descriptor closed (posix_spawn).
        .target(name: "CSyncJournalSpawn"),
        // Hardware SHA-256 (x86-64 SHA extensions) behind a run-time CPU check.
        .target(name: "CSyncJournalSHA256"),
        // Files, records, checksums, recovery. Knows nothing about sync.
        .target(name: "SyncJournalCore", dependencies: ["CSyncJournalCRC", "CSyncJournalSHA256", "SyncJournalPlatform"]),
        // What the client, the server and the wire share: ids, field values,
        // rows, cursors, mutations, pulls, the transport protocol, and the
        // push and pull rules every server applies. Needs nothing else.
        .target(name: "SyncJournalProtocol"),
        // The binary encoding of field values and field lists, shared by the
        // journal's records and sync-server's tables.
        .target(name: "SyncJournalFieldCodec", dependencies: ["SyncJournalCore", "SyncJournalProtocol"]),
        // Record payloads of the local store: operations and their field values.
        .target(name: "SyncJournalStore", dependencies: ["SyncJournalCore", "SyncJournalProtocol", "SyncJournalFieldCodec", "SyncJournalPlatform"]),
        // The sync engine: schedules, retries, and the store's side of push and pull.
        .target(name: "SyncJournalSync", dependencies: ["SyncJournalStore", "SyncJournalProtocol", "SyncJournalPlatform"]),
        // The HTTP protocol's strict JSON and message codecs (journals/PROTOCOL.md),
        // shared by the HTTP transport and the server.
        .target(name: "SyncJournalWire", dependencies: ["SyncJournalProtocol"]),
        // SyncTransport over URLSession (FoundationNetworking on Linux).
        .target(name: "SyncJournalHTTP", dependencies: ["SyncJournalWire", "SyncJournalProtocol"]),
        // The library product: one import for apps.
        .target(name: "SyncJournal", dependencies: ["SyncJournalCore", "SyncJournalProtocol", "SyncJournalStore", "SyncJournalSync"]),
        // Test support apps can use too: fault-injecting system calls and
        // transport, the in-memory reference server.
        .target(name: "SyncJournalTesting", dependencies: ["SyncJournalCore", "SyncJournalProtocol", "SyncJournalStore", "SyncJournalSync", "SyncJournalPlatform"]),
        // The argument parser every tool shares: flags, values, positionals, help text, exit 64 on a mistake.
        .target(name: "SyncJournalCommandLine"),
        // The logic behind each command-line tool, one module per tool, so it is
        // testable in-process and links only the layers that tool needs.
        //
        // How modules are named:
        //   - a library an app or a server links is `SyncJournal…` (SyncJournalServer
        //     too: it is the reference backend, documented in its own article, and
        //     tests link it as a library, not only through sync-server);
        //   - a module holding one tool's logic is that tool's name in UpperCamelCase
        //     plus `Tool` (journal-dump -> JournalDumpTool, sync-sim -> SyncSimTool),
        //     and its tests are that name plus `Tests`; no app links these. The three
        //     fuzz-* executables share one, FuzzTool: they are one tool, a regression
        //     runner with three targets, and not all of them fuzz the journal (they
        //     also fuzz the server's replies and the wire messages);
        //   - the example app's logic is NotesApp, a name that says it is the example
        //     app (what the README and the catalog call it) rather than a tool.
        .target(name: "JournalDumpTool", dependencies: ["SyncJournalProtocol", "SyncJournalPlatform", "SyncJournalCore", "SyncJournalStore", "SyncJournalCommandLine"]),
        .target(name: "JournalSalvageTool", dependencies: ["SyncJournalProtocol", "SyncJournalPlatform", "SyncJournalCore", "JournalDumpTool", "SyncJournalCommandLine"]),
        // journal-crash's writer, and the sample and golden journals it writes with `samples`.
        .target(name: "JournalCrashTool", dependencies: ["SyncJournalProtocol", "SyncJournalPlatform", "SyncJournalCore", "SyncJournalStore", "SyncJournalTesting", "SyncJournalCommandLine"]),
        // sync-sim's logic: the deterministic sync simulator and its scenario language.
        .target(name: "SyncSimTool", dependencies: ["SyncJournalProtocol", "SyncJournalPlatform", "SyncJournalCore", "SyncJournalStore", "SyncJournalSync", "SyncJournalTesting", "SyncJournalHTTP", "SyncJournalWire", "SyncJournalCommandLine"]),
        // The narrated demo, its two demo servers (in-memory, HTTP) and the push benchmark.
        .target(name: "SyncDemoTool", dependencies: ["SyncJournalProtocol", "SyncJournalPlatform", "SyncJournalCore", "SyncJournalStore", "SyncJournalSync", "SyncJournalTesting", "SyncJournalHTTP", "SyncJournalCommandLine"]),
        // The three fuzz targets and their regression runner.
        .target(name: "FuzzTool", dependencies: ["SyncJournalProtocol", "SyncJournalPlatform", "SyncJournalCore", "SyncJournalStore", "SyncJournalSync", "SyncJournalTesting", "SyncJournalWire", "JournalDumpTool", "SyncJournalCommandLine"]),

        // The system SQLite: journal-bench's baseline and sync-server's storage.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // The benchmark's logic: workloads, baselines (raw disk, SQLite), report.
        .target(name: "JournalBenchTool", dependencies: ["SyncJournalCore", "SyncJournalProtocol", "SyncJournalStore", "SyncJournalSync", "SyncJournalTesting", "SyncJournalCommandLine", "CSQLite", "SyncJournalPlatform"]),
        .executableTarget(name: "journal-bench", dependencies: ["JournalBenchTool", "SyncJournalPlatform"], path: "tools/journal-bench"),
        // The system libpq: sync-server's PostgreSQL storage.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // The HTTP sync server: HTTP/1.1 on POSIX sockets (through SyncJournalPlatform), routing, SQLite and PostgreSQL storage.
        // PostgreSQL lives in this module, not a separate one: sync-server is its only user and
        // must link libpq anyway to offer --postgres, and StorageError names its error type.
        // It links neither the local store nor the engine: the protocol module has
        // its rules and types, the field codec the encoding of the fields it
        // stores, and Core only the byte reader and writer that codec works on.
        .target(name: "SyncJournalServer", dependencies: ["SyncJournalProtocol", "SyncJournalWire", "SyncJournalFieldCodec", "SyncJournalCore", "SyncJournalCommandLine", "CSQLite", "CLibPQ", "SyncJournalPlatform", "SyncJournalServerPlatform"]),
        .executableTarget(name: "sync-server", dependencies: ["SyncJournalServer", "SyncJournalCommandLine"], path: "tools/sync-server"),
        // The load generator: concurrent HTTP clients against a running sync-server (any backend).
        .target(name: "SyncLoadTool", dependencies: ["SyncJournalHTTP", "SyncJournalProtocol", "SyncJournalWire", "SyncJournalSync", "SyncJournalStore", "SyncJournalCommandLine", "SyncJournalPlatform", "SyncJournalServerPlatform"]),
        .executableTarget(name: "sync-load", dependencies: ["SyncLoadTool"], path: "tools/sync-load"),
        // The example app: a notes command line built only on what an app links
        // (the SyncJournal and SyncJournalHTTP products) and the shared parser.
        .target(name: "NotesApp", dependencies: ["SyncJournal", "SyncJournalHTTP", "SyncJournalCommandLine"]),
        .executableTarget(name: "notes", dependencies: ["NotesApp"], path: "tools/notes"),

        .executableTarget(name: "sync-demo", dependencies: ["SyncDemoTool", "SyncJournalCommandLine"], path: "tools/sync-demo"),
        .executableTarget(name: "journal-dump", dependencies: ["JournalDumpTool", "SyncJournalCommandLine"], path: "tools/journal-dump"),
        .executableTarget(name: "journal-crash", dependencies: ["JournalCrashTool", "SyncJournalCommandLine", "SyncJournalPlatform"], path: "tools/journal-crash"),
        .executableTarget(name: "journal-salvage", dependencies: ["JournalSalvageTool", "SyncJournalCommandLine"], path: "tools/journal-salvage"),
        .executableTarget(name: "sync-sim", dependencies: ["SyncSimTool"], path: "tools/sync-sim"),
        // Fuzz targets: built normally they replay input files (the regression
        // corpus); tools/fuzz.sh builds them with libFuzzer (-sanitize=fuzzer).
        .executableTarget(name: "fuzz-journal-reader", dependencies: ["FuzzTool", "SyncJournalCommandLine"], path: "tools/fuzz-journal-reader"),
        .executableTarget(name: "fuzz-server-reply", dependencies: ["FuzzTool", "SyncJournalCommandLine"], path: "tools/fuzz-server-reply"),
        .executableTarget(name: "fuzz-wire-messages", dependencies: ["FuzzTool", "SyncJournalCommandLine"], path: "tools/fuzz-wire-messages"),

        // Helpers several test targets share: running the built tools, a clock that
        // stands still, a recording transport, captured output. Not a product: no app links it.
        .target(
            name: "SyncJournalTestSupport",
            dependencies: ["SyncJournalPlatform", "SyncJournalProtocol", "SyncJournalStore", "SyncJournalTesting", "SyncJournalCommandLine", "CSyncJournalSpawn"],
            path: "Tests/SyncJournalTestSupport"
        ),

        .testTarget(name: "SyncJournalPlatformTests", dependencies: ["SyncJournalPlatform", "SyncJournalServerPlatform"]),
        .testTarget(name: "SyncJournalCoreTests", dependencies: ["SyncJournalCore", "SyncJournalTesting", "SyncJournalPlatform", "SyncJournalTestSupport"]),
        .testTarget(name: "SyncJournalTests", dependencies: ["SyncJournalTestSupport", "SyncJournal", "SyncJournalTesting"]),
        .testTarget(name: "SyncJournalSyncTests", dependencies: ["SyncJournalTestSupport", "SyncJournalSync", "SyncJournalProtocol", "SyncJournalStore", "SyncJournalCore", "SyncJournalTesting", "SyncJournalPlatform"]),
        .testTarget(name: "SyncJournalStoreTests", dependencies: ["SyncJournalTestSupport", "SyncJournalStore", "SyncJournalProtocol", "SyncJournalFieldCodec", "SyncJournalCore", "SyncJournalTesting", "SyncJournalPlatform"]),
        .testTarget(
            name: "SyncSimToolTests",
            dependencies: ["SyncJournalTestSupport", "SyncSimTool", "SyncJournalTesting", "SyncJournalProtocol", "SyncJournalStore", "SyncJournalSync", "SyncJournalCore", "sync-sim"],
            resources: [.copy("Scenarios")]
        ),
        .testTarget(name: "SyncJournalCommandLineTests", dependencies: ["SyncJournalCommandLine"]),
        .testTarget(name: "JournalBenchToolTests", dependencies: ["JournalBenchTool"]),
        .testTarget(name: "SyncJournalWireTests", dependencies: ["SyncJournalWire", "SyncJournalProtocol", "SyncJournalSync", "SyncJournalStore"]),
        .testTarget(name: "SyncJournalHTTPTests", dependencies: ["SyncJournalTestSupport", "SyncJournalHTTP", "SyncJournalWire", "SyncJournalProtocol", "SyncJournalSync", "SyncJournalStore", "SyncJournalTesting", "SyncJournalPlatform", "SyncJournalServerPlatform"]),
        .testTarget(
            name: "SyncJournalServerTests",
            dependencies: ["SyncJournalTestSupport", "SyncJournalPlatform", "SyncJournalServerPlatform", "SyncJournalServer", "SyncJournalProtocol", "SyncJournalWire", "SyncJournalHTTP", "SyncJournalTesting", "SyncJournalStore", "SyncJournalSync", "SyncJournalCore", "sync-server"]
        ),
        .testTarget(name: "SyncLoadToolTests", dependencies: ["SyncLoadTool"]),
        .testTarget(name: "NotesAppTests", dependencies: ["SyncJournalTestSupport", "NotesApp", "SyncJournal", "SyncJournalCommandLine", "SyncJournalTesting"]),
        // The client tools run as binaries against the sync-server binary.
        .testTarget(name: "ServerClientToolsTests", dependencies: ["SyncJournalTestSupport", "SyncJournalPlatform", "SyncJournalTesting", "sync-server", "sync-demo", "sync-sim", "sync-load", "notes"]),
        .testTarget(
            name: "JournalToolsTests",
            dependencies: ["SyncJournalTestSupport", "SyncJournalPlatform", "SyncJournalProtocol", "JournalDumpTool", "JournalCrashTool", "FuzzTool", "SyncJournalCommandLine", "SyncJournalCore", "SyncJournalStore", "SyncJournalTesting",
                           "journal-dump", "journal-crash", "journal-salvage", "sync-demo", "sync-sim", "journal-bench", "sync-server", "sync-load",
                           "fuzz-journal-reader", "fuzz-server-reply", "fuzz-wire-messages"],
            resources: [.copy("Expected")]
        ),
    ]
)
