/**
 * `response` with its body wrapped so that `end` is called once when the body is over: `true`
 * when the server read its last chunk, `false` when the body failed or was cancelled (the
 * client hung up mid-stream). A web `Response` has no "sent" event; the reads of its body stream
 * are the only sign of how far sending got. Without a body, `end(true)` at once.
 */
export function withBodyEnd(response: Response, end: (completed: boolean) => void): Response {
  const body = response.body;
  if (body === null) {
    end(true);
    return response;
  }
  const reader = body.getReader();
  let ended = false;
  const endOnce = (completed: boolean) => {
    if (ended) return;
    ended = true;
    end(completed);
  };
  const wrapped = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          endOnce(true);
        } else controller.enqueue(value);
      } catch (error) {
        controller.error(error);
        endOnce(false);
      }
    },
    async cancel(reason) {
      endOnce(false);
      await reader.cancel(reason);
    },
  });
  return new Response(wrapped, response);
}
