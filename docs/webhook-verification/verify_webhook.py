import hashlib
import hmac
import json
import time


def verify_webhook(raw_body: bytes, signature_header: str, secret: str, tolerance: int = 300) -> dict:
    """Returns the event when X-Webhook-Signature is valid; raises ValueError otherwise.

    raw_body is the request body exactly as received (bytes): re-serialised JSON
    has other bytes and never verifies. secret is the whole whsec_... string.
    """
    timestamp, signatures = None, []
    for part in signature_header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t" and value.isdigit():
            timestamp = int(value)
        elif key == "v1":
            signatures.append(value)
    if timestamp is None or not signatures:
        raise ValueError("malformed X-Webhook-Signature header")
    if abs(time.time() - timestamp) > tolerance:
        raise ValueError("timestamp outside the tolerance")
    expected = hmac.new(secret.encode(), str(timestamp).encode() + b"." + raw_body, hashlib.sha256).hexdigest()
    if not any(hmac.compare_digest(expected, s) for s in signatures):
        raise ValueError("no matching signature")
    return json.loads(raw_body)


# Flask: event = verify_webhook(request.get_data(), request.headers.get("X-Webhook-Signature", ""), os.environ["PAYCOLLECT_WEBHOOK_SECRET"])
# Django: event = verify_webhook(request.body, request.headers.get("X-Webhook-Signature", ""), settings.PAYCOLLECT_WEBHOOK_SECRET)
# Then deduplicate on the X-Webhook-Id header and answer 2xx quickly.
