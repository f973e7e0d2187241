import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A session delegate that refuses every redirect, so the bearer token never
/// follows one to another origin; the 3xx reaches the transport as it came.
final class RedirectRefusal: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    // No state: @unchecked only because NSObject subclasses are not inferred Sendable.
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
