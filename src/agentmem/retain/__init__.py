"""Retain: normalise input → extract facts → recognise and resolve entities → link → store."""
