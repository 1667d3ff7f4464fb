/** Shown to a signed-in user whose token carries no Management API permission: a clear page, not a broken console. */
export function NoAccess({ who, onSignOut }: { who: string; onSignOut: () => void }) {
  return (
    <main className="narrow" id="main">
      <h1>No access</h1>
      <p>
        You are signed in as <strong>{who}</strong>, but this account is not a console admin of this tenant.
      </p>
      <p>An admin can give you the “Gatehouse Console Admin” role, or invite you with <code>gatehouse admin invite EMAIL</code>.</p>
      <button type="button" onClick={onSignOut}>
        Sign out
      </button>
    </main>
  );
}
