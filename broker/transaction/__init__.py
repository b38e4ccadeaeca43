"""The transaction coordinator: transactional ids, their producers and transactions, kept in
``__transaction_state``."""
