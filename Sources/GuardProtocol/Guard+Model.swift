import FamilyControlsModel

// The interface's enums and the public model's types, case by case, so the
// Guard, familyctl and the app library convert the same way.

extension Guard.Status {
    /// The status on the wire; the Guard never gives approvedWithDataAccess
    /// (it cannot be made), so every status there is has its name.
    package init(_ status: AuthorizationStatus) {
        switch status {
        case .notDetermined: self = .notDetermined
        case .denied: self = .denied
        case .approved: self = .approved
        }
    }
}

extension AuthorizationStatus {
    package init(_ status: Guard.Status) {
        switch status {
        case .notDetermined: self = .notDetermined
        case .denied: self = .denied
        case .approved: self = .approved
        }
    }
}

extension Guard.Member {
    package init(_ member: FamilyControlsMember) {
        switch member {
        case .child: self = .child
        case .individual: self = .individual
        }
    }
}

extension FamilyControlsMember {
    package init(_ member: Guard.Member) {
        switch member {
        case .child: self = .child
        case .individual: self = .individual
        }
    }
}

extension Guard.PromptKind {
    package init(_ kind: AuthorizationPrompt.Kind) {
        switch kind {
        case .alert: self = .alert
        case .guardian: self = .guardian
        case .secret: self = .secret
        case .text: self = .text
        case .pending: self = .pending
        case .info: self = .info
        case .error: self = .error
        }
    }
}

extension AuthorizationPrompt.Kind {
    package init(_ kind: Guard.PromptKind) {
        switch kind {
        case .alert: self = .alert
        case .guardian: self = .guardian
        case .secret: self = .secret
        case .text: self = .text
        case .pending: self = .pending
        case .info: self = .info
        case .error: self = .error
        }
    }
}
