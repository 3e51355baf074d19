<?php

/**
 * Returns the decoded event when X-Webhook-Signature is valid; throws otherwise.
 * $rawBody is the body exactly as received (file_get_contents('php://input')):
 * re-encoded JSON has other bytes and never verifies. $secret is the whole whsec_... string.
 */
function verify_webhook(string $rawBody, string $signatureHeader, string $secret, int $tolerance = 300): array
{
    $timestamp = null;
    $signatures = [];
    foreach (explode(',', $signatureHeader) as $part) {
        [$key, $value] = array_pad(explode('=', trim($part), 2), 2, '');
        if ($key === 't' && ctype_digit($value)) {
            $timestamp = (int) $value;
        } elseif ($key === 'v1') {
            $signatures[] = $value;
        }
    }
    if ($timestamp === null || !$signatures) {
        throw new UnexpectedValueException('malformed X-Webhook-Signature header');
    }
    if (abs(time() - $timestamp) > $tolerance) {
        throw new UnexpectedValueException('timestamp outside the tolerance');
    }
    $expected = hash_hmac('sha256', $timestamp . '.' . $rawBody, $secret);
    foreach ($signatures as $signature) {
        if (hash_equals($expected, $signature)) {
            return json_decode($rawBody, true, 512, JSON_THROW_ON_ERROR);
        }
    }
    throw new UnexpectedValueException('no matching signature');
}

// In your endpoint:
// $event = verify_webhook(file_get_contents('php://input'), $_SERVER['HTTP_X_WEBHOOK_SIGNATURE'] ?? '', getenv('PAYCOLLECT_WEBHOOK_SECRET'));
// Then deduplicate on $_SERVER['HTTP_X_WEBHOOK_ID'] and answer 2xx quickly.
