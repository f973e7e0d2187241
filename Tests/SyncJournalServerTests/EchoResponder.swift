import Dispatch
import SyncJournalPlatform
@testable import SyncJournalServer

/// Answers `/echo` with the body it got, `/hold` only once released, and
/// failures with their code as text (no JSON codec needed at this layer).
final class EchoResponder: HTTPResponder {
    let held = DispatchSemaphore(value: 0)
    let entered = DispatchSemaphore(value: 0)
    let requests = Mutex(0)

    func respond(to request: HTTPRequest) -> HTTPResponse {
        requests.withLock { $0 += 1 }
        if request.path == "/hold" {
            entered.signal()
            held.wait()
        }
        return HTTPResponse(status: 200, body: Array("\(request.method) \(request.target) ".utf8) + request.body)
    }

    func respond(to failure: HTTPRequestFailure) -> HTTPResponse {
        HTTPResponse(status: failure.status, body: Array(failure.code.utf8), closesConnection: true)
    }
}
